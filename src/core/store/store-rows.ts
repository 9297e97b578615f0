// The store's row writes (each called inside the store's write transaction, store-tx.ts): a session, a run at the end
// of its session, a run's end with its messages, and the session's status that follows its latest run.
import type { Db } from "../host.ts";
import type { RunResult, StoredMessage } from "../types.ts";
import { capMessage, type NewRun, type NewSession, type RunStatus } from "./store-types.ts";

export function insertSession(db: Db, s: NewSession, status: RunStatus, now: number): void {
  db.run(
    "INSERT INTO sessions (id, name, agent, cwd, status, session_file, parent_session, schedule, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    [
      s.id,
      s.name,
      s.agent,
      s.cwd,
      status,
      s.sessionFile ?? null,
      s.parentSession ?? null,
      s.schedule ?? null,
      now,
      now,
    ],
  );
}

/** A session follows its latest run: its status, and the run's task name (when it has one). */
export function setSessionStatus(db: Db, sessionId: string, status: RunStatus, now: number, name?: string): void {
  db.run("UPDATE sessions SET status = ?, name = COALESCE(?, name), updated_at = ? WHERE id = ?", [
    status,
    name ?? null,
    now,
    sessionId,
  ]);
}

/** A new run at the end of its session. */
export function insertRun(db: Db, sessionId: string, run: NewRun & { status: RunStatus }, now: number): number {
  const seq =
    (db.get<{ n: number }>("SELECT COALESCE(MAX(seq), 0) AS n FROM runs WHERE session_id = ?", [sessionId])?.n ?? 0) +
    1;
  db.run(
    "INSERT INTO runs (session_id, seq, prompt, status, started_at, owner_pid, pi, sandbox, runner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    [
      sessionId,
      seq,
      run.prompt,
      run.status,
      now,
      run.ownerPid,
      run.pi ?? null,
      run.sandbox === undefined ? null : Number(run.sandbox),
      run.runner ?? null,
    ],
  );
  const id = db.get<{ id: number }>("SELECT last_insert_rowid() AS id")!.id;
  setSessionStatus(db, sessionId, run.status, now, run.name);
  return id;
}

export function runWarnings(db: Db, runId: number): string[] {
  const row = db.get<{ warnings: string | null }>("SELECT warnings FROM runs WHERE id = ?", [runId]);
  return row?.warnings ? (JSON.parse(row.warnings) as string[]) : [];
}

/** A run's end: its result, its messages, and its session's status. */
export function finishRow(db: Db, runId: number, r: RunResult, now: number): void {
  const messages = r.messages.map(capMessage);
  // Warnings a task hook recorded while the run went on (task-hooks.ts) stay, after the run's own.
  const earlier = runWarnings(db, runId).filter((w) => !r.warnings?.includes(w));
  const warnings = [...(r.warnings ?? []), ...earlier];
  db.run(
    `UPDATE runs SET status = ?, exit_code = ?, model = ?, usage = ?, error = ?, error_code = ?, output = ?, finalize = ?,
       finalized = ?, tool_count = ?, ended_at = ?, message_count = ?, warnings = ?, isolation = ?, pi = COALESCE(pi || ?, pi) WHERE id = ?`,
    [
      r.status,
      r.exitCode,
      r.model ?? null,
      JSON.stringify(r.usage),
      r.error ?? null,
      r.errorCode ?? null,
      r.output,
      r.finalize ? JSON.stringify(r.finalize) : null,
      r.finalized === undefined ? null : r.finalized ? 1 : 0,
      r.toolCount,
      now,
      messages.length,
      warnings.length ? JSON.stringify(warnings) : null,
      r.isolation ? JSON.stringify(r.isolation) : null,
      r.keptChild ? ` · kept child (task ${r.keptChild.task} of pid ${r.keptChild.pid})` : null,
      runId,
    ],
  );
  insertMessages(db, runId, messages);
  db.run("UPDATE sessions SET status = ?, updated_at = ? WHERE id = (SELECT session_id FROM runs WHERE id = ?)", [
    r.status,
    now,
    runId,
  ]);
}

export function insertMessages(db: Db, runId: number, messages: StoredMessage[], from = 0): void {
  messages.forEach((m, j) => {
    const calls = m.role === "assistant" ? JSON.stringify(m.toolCalls) : null;
    const name = m.role === "toolResult" ? m.name : null;
    const isError = m.role === "toolResult" ? (m.isError ? 1 : 0) : null;
    const error = m.role === "assistant" ? (m.error ?? null) : null;
    db.run(
      "INSERT OR REPLACE INTO messages (run_id, seq, role, text, tool_calls, name, is_error, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      [runId, from + j, m.role, m.text, calls, name, isError, error],
    );
  });
}
