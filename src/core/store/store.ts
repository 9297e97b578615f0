// The session store over SQLite (docs/architecture.md "The store"): migrations by PRAGMA user_version, every write in
// BEGIN IMMEDIATE (deferred read-then-write transactions fail under contention), retried on SQLITE_BUSY.
import type { Db } from "../host.ts";
import {
  INTERRUPTED_MESSAGE,
  NEVER_STARTED_MESSAGE,
  busyRun,
  capMessage,
  newSessionId,
  resumeRunningMessage,
  type ImportedRun,
  type NewRun,
  type NewSession,
  type PruneCandidate,
  type QueuedRun,
  type RunRecord,
  type SessionRecord,
  type SessionStore,
  type SessionSummary,
  NOT_STARTED_CODES,
} from "./store-types.ts";
import { emptyUsage, type ErrorCode, type RunResult, type StoredMessage } from "../types.ts";

import { toRun, type RunRow, type SessionRow } from "./store-schema.ts";
import { migrate, writeTx } from "./store-tx.ts";
import { deleteSessions, prunable, vacuum } from "./store-upkeep.ts";
import { finishRow, insertMessages, insertRun, insertSession, runWarnings, setSessionStatus } from "./store-rows.ts";

export { MemoryStore } from "./memory-store.ts";
export { SCHEMA_VERSION } from "./store-schema.ts";
export type { SessionStore } from "./store-types.ts";

export class Store implements SessionStore {
  constructor(
    private readonly db: Db,
    private readonly opts: { isAlive: (pid: number) => boolean; now?: () => number },
  ) {
    migrate(this.db);
  }

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  /** Runs fn in BEGIN IMMEDIATE, retried while another process holds the write lock (store-tx.ts). */
  private write<T>(fn: () => T): T {
    return writeTx(this.db, fn);
  }

  newSessionId(): string {
    return newSessionId();
  }

  createSession(s: NewSession): void {
    this.write(() => insertSession(this.db, s, "running", this.now()));
  }

  queueRun(s: NewSession, run: QueuedRun): number {
    return this.write(() => {
      if (!this.db.get("SELECT 1 AS x FROM sessions WHERE id = ?", [s.id]))
        insertSession(this.db, s, "queued", this.now());
      return insertRun(this.db, s.id, { ...run, status: "queued" }, this.now());
    });
  }

  startRun(sessionId: string, run: NewRun): number {
    return this.write(() => {
      const open = this.db.all<{ id: number; status: RunRecord["status"]; owner_pid: number | null }>(
        "SELECT id, status, owner_pid FROM runs WHERE session_id = ? AND status IN ('running', 'queued') ORDER BY seq DESC",
        [sessionId],
      );
      // Its call recorded it when it accepted the task (this owner's queued run): this is its start.
      const own = open.find((r) => r.status === "queued" && r.owner_pid === run.ownerPid);
      const other = open.find(
        (r) => r !== own && busyRun({ status: r.status, ownerPid: r.owner_pid }, this.opts.isAlive),
      );
      if (other) throw new Error(resumeRunningMessage(sessionId));
      if (own) {
        this.db.run(
          "UPDATE runs SET status = 'running', prompt = ?, started_at = ?, pi = ?, sandbox = ?, runner = ? WHERE id = ?",
          [
            run.prompt,
            this.now(),
            run.pi ?? null,
            run.sandbox === undefined ? null : Number(run.sandbox),
            run.runner ?? null,
            own.id,
          ],
        );
        setSessionStatus(this.db, sessionId, "running", this.now(), run.name);
        return own.id;
      }
      return insertRun(this.db, sessionId, { ...run, status: "running" }, this.now());
    });
  }

  finishQueued(runId: number, r: RunResult): void {
    this.write(() => {
      const row = this.db.get<{ status: string }>("SELECT status FROM runs WHERE id = ?", [runId]);
      if (row?.status === "queued") finishRow(this.db, runId, r, this.now());
    });
  }

  finishRun(runId: number, r: RunResult): void {
    this.write(() => finishRow(this.db, runId, r, this.now()));
  }

  addRunWarnings(runId: number, warnings: string[]): void {
    if (!warnings.length) return;
    this.write(() => {
      const all = [...runWarnings(this.db, runId), ...warnings];
      this.db.run("UPDATE runs SET warnings = ? WHERE id = ?", [JSON.stringify(all), runId]);
    });
  }

  checkpointRun(runId: number, messages: StoredMessage[], from: number): void {
    if (!messages.length) return;
    this.write(() => {
      insertMessages(this.db, runId, messages.map(capMessage), from);
      this.db.run("UPDATE runs SET message_count = ? WHERE id = ? AND status = 'running'", [
        from + messages.length,
        runId,
      ]);
    });
  }

  setSessionFile(sessionId: string, file: string): void {
    this.write(() => this.db.run("UPDATE sessions SET session_file = ? WHERE id = ?", [file, sessionId]));
  }

  getSession(id: string): SessionRecord | null {
    const s = this.db.get<SessionRow>("SELECT * FROM sessions WHERE id = ?", [id]);
    if (!s) return null;
    const runs = this.db.all<RunRow>("SELECT * FROM runs WHERE session_id = ? ORDER BY seq", [id]).map(toRun);
    return {
      id: s.id,
      name: s.name,
      agent: s.agent,
      cwd: s.cwd,
      status: s.status as SessionRecord["status"],
      sessionFile: s.session_file ?? undefined,
      parentSession: s.parent_session ?? undefined,
      ...(s.schedule ? { schedule: s.schedule } : {}),
      createdAt: s.created_at,
      updatedAt: s.updated_at,
      runs,
    };
  }

  getMessages(runId: number): StoredMessage[] {
    const rows = this.db.all<{
      role: string;
      text: string;
      tool_calls: string | null;
      name: string | null;
      is_error: number | null;
      error: string | null;
    }>("SELECT role, text, tool_calls, name, is_error, error FROM messages WHERE run_id = ? ORDER BY seq", [runId]);
    return rows.map((r): StoredMessage => {
      if (r.role === "toolResult")
        return { role: "toolResult", name: r.name ?? "", text: r.text, isError: r.is_error === 1 };
      if (r.role === "assistant")
        return {
          role: "assistant",
          text: r.text,
          toolCalls: r.tool_calls ? JSON.parse(r.tool_calls) : [],
          ...(r.error ? { error: r.error } : {}),
        };
      return { role: "user", text: r.text };
    });
  }

  listSessions(opts: { limit: number; offset?: number }): SessionSummary[] {
    const rows = this.db.all<SessionRow & { cost: number | null; run_count: number; last_error_code: string | null }>(
      `SELECT s.*, (SELECT SUM(json_extract(usage, '$.cost')) FROM runs r WHERE r.session_id = s.id) AS cost,
              (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id) AS run_count,
              (SELECT error_code FROM runs r WHERE r.session_id = s.id ORDER BY r.id DESC LIMIT 1) AS last_error_code
         FROM sessions s ORDER BY s.updated_at DESC, s.rowid DESC LIMIT ? OFFSET ?`,
      [opts.limit, opts.offset ?? 0],
    );
    return rows.map((s) => ({
      id: s.id,
      name: s.name,
      agent: s.agent,
      cwd: s.cwd,
      status: s.status as SessionSummary["status"],
      cost: s.cost ?? 0,
      runCount: s.run_count,
      ...(s.last_error_code ? { lastErrorCode: s.last_error_code as ErrorCode } : {}),
      ...(s.schedule ? { schedule: s.schedule } : {}),
      createdAt: s.created_at,
      updatedAt: s.updated_at,
    }));
  }

  /** The latest session a schedule started (`subagents schedule list`). */
  lastOfSchedule(schedule: string): { id: string; status: string; errorCode?: string; updatedAt: number } | null {
    const row = this.db.get<{ id: string; status: string; updated_at: number; error_code: string | null }>(
      `SELECT s.id, s.status, s.updated_at, (SELECT error_code FROM runs r WHERE r.session_id = s.id ORDER BY r.id DESC LIMIT 1) AS error_code
         FROM sessions s WHERE s.schedule = ? ORDER BY s.updated_at DESC, s.rowid DESC LIMIT 1`,
      [schedule],
    );
    return row
      ? {
          id: row.id,
          status: row.status,
          updatedAt: row.updated_at,
          ...(row.error_code ? { errorCode: row.error_code } : {}),
        }
      : null;
  }

  parentUsage(parentSession: string): { spawns: number; cost: number } {
    // A run refused before its child started (the same test as startedChild) is not a spawn.
    // A queued one is not yet (the caps count it as coming), nor one that never started.
    const notStarted = `r.status = 'queued' OR r.error = ? OR (r.status = 'error' AND r.exit_code IS NULL AND COALESCE(json_extract(r.usage, '$.turns'), 0) = 0 AND r.error_code IN (${NOT_STARTED_CODES.map(() => "?").join(", ")}))`;
    const row = this.db.get<{ spawns: number; cost: number | null }>(
      `SELECT SUM(CASE WHEN ${notStarted} THEN 0 ELSE 1 END) AS spawns, SUM(json_extract(r.usage, '$.cost')) AS cost
         FROM runs r JOIN sessions s ON s.id = r.session_id WHERE s.parent_session = ?`,
      [NEVER_STARTED_MESSAGE, ...NOT_STARTED_CODES, parentSession],
    );
    return { spawns: row?.spawns ?? 0, cost: row?.cost ?? 0 };
  }

  recoverStale(isAlive: (pid: number) => boolean): number {
    // Two queries, one per partial index (runs_running, runs_queued).
    const open = ["running", "queued"].flatMap((status) =>
      this.db.all<{ id: number; session_id: string; owner_pid: number | null; status: string }>(
        "SELECT id, session_id, owner_pid, status FROM runs WHERE status = ?",
        [status],
      ),
    );
    const dead = open.filter((r) => r.owner_pid === null || !isAlive(r.owner_pid));
    if (!dead.length) return 0;
    const now = this.now();
    this.write(() => {
      for (const r of dead) {
        // A queued task never started and nobody will start it: said as such, not as an interrupted run.
        const error = r.status === "queued" ? NEVER_STARTED_MESSAGE : INTERRUPTED_MESSAGE;
        this.db.run(
          "UPDATE runs SET status = 'error', error = ?, error_code = 'SUBAGENT_FAILED', ended_at = ? WHERE id = ? AND status = ?",
          [error, now, r.id, r.status],
        );
        this.db.run("UPDATE sessions SET status = 'error', updated_at = ? WHERE id = ?", [now, r.session_id]);
      }
    });
    return dead.length;
  }

  prunable(opts: { before?: number; keep?: number }): PruneCandidate[] {
    return prunable(this.db, opts);
  }

  deleteSessions(ids: string[]): string[] {
    return this.write(() => deleteSessions(this.db, ids));
  }

  vacuum(): void {
    vacuum(this.db);
  }

  importRuns(runs: ImportedRun[]): void {
    if (!runs.length || this.getSession(runs[0].sessionId)) return;
    const first = runs[0];
    this.write(() => {
      this.db.run(
        "INSERT INTO sessions (id, name, agent, cwd, status, session_file, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
          first.sessionId,
          first.name,
          first.agent,
          first.cwd,
          runs[runs.length - 1].status,
          first.sessionFile ?? null,
          first.at,
          runs[runs.length - 1].at,
        ],
      );
      runs.forEach((r, i) => {
        this.db.run(
          "INSERT INTO runs (session_id, seq, prompt, status, exit_code, model, usage, error, error_code, output, finalized, started_at, ended_at, message_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          [
            r.sessionId,
            i + 1,
            r.prompt,
            r.status,
            r.exitCode ?? null,
            r.model ?? null,
            JSON.stringify(r.usage ?? emptyUsage()),
            r.error ?? null,
            r.errorCode ?? null,
            r.output ?? "",
            typeof r.finalized === "boolean" ? Number(r.finalized) : null,
            r.at,
            r.at,
            r.messages?.length ?? 0,
          ],
        );
        const runId = this.db.get<{ id: number }>("SELECT last_insert_rowid() AS id")!.id;
        insertMessages(this.db, runId, (r.messages ?? []).map(capMessage));
      });
    });
  }
}
