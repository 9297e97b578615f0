// The session store over SQLite (docs/architecture.md "The store"): migrations by PRAGMA user_version, every write in
// BEGIN IMMEDIATE (deferred read-then-write transactions fail under contention), retried on SQLITE_BUSY.
import type { Db } from "../host.ts";
import {
  INTERRUPTED_MESSAGE,
  capMessage,
  newSessionId,
  resumeRunningMessage,
  type ImportedRun,
  type NewRun,
  type NewSession,
  type PruneCandidate,
  type SessionRecord,
  type SessionStore,
  type SessionSummary,
  ownerOf,
  type OwnerAlive,
} from "./store-types.ts";
import { guardedDb, MIN_FREE_BYTES, tooFull } from "./store-error.ts";
import { emptyUsage, type RunResult, type StoredMessage } from "../types.ts";

import { migrate, writeTx } from "./store-tx.ts";
import { deleteSessions, prunable, vacuum } from "./store-upkeep.ts";
import { getMessages, getSession, lastOfSchedule, listSessions, parentUsage } from "./store-read.ts";

export { MemoryStore } from "./memory-store.ts";
export { StoreError } from "./store-error.ts";

/** Ends the write probe's transaction in a rollback (writeTx rolls back on a throw). */
class ProbeDone extends Error {}
export { SCHEMA_VERSION } from "./store-schema.ts";
export type { SessionStore } from "./store-types.ts";

export type StoreOptions = {
  /** Whether a run's owner is still that process (its PID and start time). */
  isAlive: OwnerAlive;
  now?: () => number;
  /** The database file, named in errors (StoreError). */
  file?: string;
  /** Free bytes where the database lives (checkWritable), or null when the system does not tell. */
  freeBytes?: () => number | null;
  /** Gives back the space kept in reserve beside the database, before failRun's short record. */
  release?: () => void;
};

export class Store implements SessionStore {
  private readonly db: Db;
  private readonly file: string;

  constructor(
    db: Db,
    private readonly opts: StoreOptions,
  ) {
    this.file = opts.file ?? "(the session database)";
    // Every failure below is a StoreError naming the file: the fronts only render it.
    this.db = guardedDb(db, this.file);
    migrate(this.db, this.file);
  }

  checkWritable(): void {
    const free = this.opts.freeBytes?.();
    if (free !== null && free !== undefined && free < MIN_FREE_BYTES) throw tooFull(this.file, free);
    // A write rolled back before it reaches the file: what a read-only or foreign-owned database refuses.
    try {
      this.write(() => {
        this.db.exec("CREATE TABLE write_probe (x)");
        throw new ProbeDone();
      });
    } catch (err) {
      if (!(err instanceof ProbeDone)) throw err;
    }
  }

  failRun(runId: number, error: string, code: string): void {
    this.opts.release?.();
    const now = this.now();
    this.write(() => {
      this.db.run(
        "UPDATE runs SET status = 'error', error = ?, error_code = ?, ended_at = ? WHERE id = ? AND status = 'running'",
        [error, code, now, runId],
      );
      this.db.run(
        "UPDATE sessions SET status = 'error', updated_at = ? WHERE id = (SELECT session_id FROM runs WHERE id = ?)",
        [now, runId],
      );
    });
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
    const now = this.now();
    this.write(() =>
      this.db.run(
        "INSERT INTO sessions (id, name, agent, cwd, status, session_file, parent_session, schedule, created_at, updated_at) VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)",
        [s.id, s.name, s.agent, s.cwd, s.sessionFile ?? null, s.parentSession ?? null, s.schedule ?? null, now, now],
      ),
    );
  }

  startRun(sessionId: string, run: NewRun): number {
    const now = this.now();
    return this.write(() => {
      const running = this.db.get<{ owner_pid: number | null; owner_start: string | null }>(
        "SELECT owner_pid, owner_start FROM runs WHERE session_id = ? AND status = 'running' ORDER BY seq DESC LIMIT 1",
        [sessionId],
      );
      const owner = running ? ownerOf({ ownerPid: running.owner_pid, ownerStart: running.owner_start }) : null;
      if (running && (owner === null || this.opts.isAlive(owner))) throw new Error(resumeRunningMessage(sessionId));
      const seq =
        (this.db.get<{ n: number }>("SELECT COALESCE(MAX(seq), 0) AS n FROM runs WHERE session_id = ?", [sessionId])
          ?.n ?? 0) + 1;
      this.db.run(
        "INSERT INTO runs (session_id, seq, prompt, status, started_at, owner_pid, owner_start, pi, sandbox, runner) VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)",
        [
          sessionId,
          seq,
          run.prompt,
          now,
          run.ownerPid,
          run.ownerStart ?? null,
          run.pi ?? null,
          run.sandbox === undefined ? null : Number(run.sandbox),
          run.runner ?? null,
        ],
      );
      const id = this.db.get<{ id: number }>("SELECT last_insert_rowid() AS id")!.id;
      this.db.run("UPDATE sessions SET status = 'running', name = COALESCE(?, name), updated_at = ? WHERE id = ?", [
        run.name ?? null,
        now,
        sessionId,
      ]);
      return id;
    });
  }

  finishRun(runId: number, r: RunResult): void {
    const now = this.now();
    const messages = r.messages.map(capMessage);
    this.write(() => {
      // Warnings a task hook recorded while the run went on (task-hooks.ts) stay, after the run's own.
      const earlier = this.runWarnings(runId).filter((w) => !r.warnings?.includes(w));
      const warnings = [...(r.warnings ?? []), ...earlier];
      this.db.run(
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
      this.insertMessages(runId, messages);
      this.db.run(
        "UPDATE sessions SET status = ?, updated_at = ? WHERE id = (SELECT session_id FROM runs WHERE id = ?)",
        [r.status, now, runId],
      );
    });
  }

  private runWarnings(runId: number): string[] {
    const row = this.db.get<{ warnings: string | null }>("SELECT warnings FROM runs WHERE id = ?", [runId]);
    return row?.warnings ? (JSON.parse(row.warnings) as string[]) : [];
  }

  addRunWarnings(runId: number, warnings: string[]): void {
    if (!warnings.length) return;
    this.write(() => {
      const all = [...this.runWarnings(runId), ...warnings];
      this.db.run("UPDATE runs SET warnings = ? WHERE id = ?", [JSON.stringify(all), runId]);
    });
  }

  checkpointRun(runId: number, messages: StoredMessage[], from: number): void {
    if (!messages.length) return;
    this.write(() => {
      this.insertMessages(runId, messages.map(capMessage), from);
      this.db.run("UPDATE runs SET message_count = ? WHERE id = ? AND status = 'running'", [
        from + messages.length,
        runId,
      ]);
    });
  }

  private insertMessages(runId: number, messages: StoredMessage[], from = 0): void {
    messages.forEach((m, j) => {
      const i = from + j;
      const calls = m.role === "assistant" ? JSON.stringify(m.toolCalls) : null;
      const name = m.role === "toolResult" ? m.name : null;
      const isError = m.role === "toolResult" ? (m.isError ? 1 : 0) : null;
      const error = m.role === "assistant" ? (m.error ?? null) : null;
      this.db.run(
        "INSERT OR REPLACE INTO messages (run_id, seq, role, text, tool_calls, name, is_error, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [runId, i, m.role, m.text, calls, name, isError, error],
      );
    });
  }

  setSessionFile(sessionId: string, file: string): void {
    this.write(() => this.db.run("UPDATE sessions SET session_file = ? WHERE id = ?", [file, sessionId]));
  }

  getSession(id: string): SessionRecord | null {
    return getSession(this.db, id);
  }

  getMessages(runId: number): StoredMessage[] {
    return getMessages(this.db, runId);
  }

  listSessions(opts: { limit: number; offset?: number }): SessionSummary[] {
    return listSessions(this.db, opts);
  }

  /** The latest session a schedule started (`subagents schedule list`). */
  lastOfSchedule(schedule: string): ReturnType<typeof lastOfSchedule> {
    return lastOfSchedule(this.db, schedule);
  }

  parentUsage(parentSession: string): { spawns: number; cost: number } {
    return parentUsage(this.db, parentSession);
  }

  recoverStale(isAlive: OwnerAlive): number {
    const running = this.db.all<{
      id: number;
      session_id: string;
      owner_pid: number | null;
      owner_start: string | null;
    }>("SELECT id, session_id, owner_pid, owner_start FROM runs WHERE status = 'running'");
    const dead = running.filter((r) => {
      const owner = ownerOf({ ownerPid: r.owner_pid, ownerStart: r.owner_start });
      return owner === null || !isAlive(owner);
    });
    if (!dead.length) return 0;
    const now = this.now();
    this.write(() => {
      for (const r of dead) {
        this.db.run(
          "UPDATE runs SET status = 'error', error = ?, error_code = 'SUBAGENT_FAILED', ended_at = ? WHERE id = ? AND status = 'running'",
          [INTERRUPTED_MESSAGE, now, r.id],
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
        this.insertMessages(runId, (r.messages ?? []).map(capMessage));
      });
    });
  }
}
