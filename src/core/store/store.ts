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
  type UsageBy,
  type UsageRow,
  ownerOf,
  type OwnerAlive,
  type RunOwner,
} from "./store-types.ts";
import { emptyUsage, type RunResult, type StoredMessage } from "../types.ts";
import type { IsolationResult } from "../isolation-types.ts";
import { guardedDb, MIN_FREE_BYTES, tooFull } from "./store-error.ts";
import { migrate, writeTx } from "./store-tx.ts";
import { deleteSessions, prunable, vacuum } from "./store-upkeep.ts";
import { finishRow, insertMessages, insertRun, insertSession, runWarnings, setSessionStatus } from "./store-rows.ts";
import { getMessages, getSession, lastOfSchedule, listSessions, parentUsage, usageSummary } from "./store-read.ts";
import { BatchRecords } from "./batch-records.ts";

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
  /** Batch jobs and their items (`subagents batch`). */
  readonly batches: BatchRecords;

  constructor(
    db: Db,
    private readonly opts: StoreOptions,
  ) {
    this.file = opts.file ?? "(the session database)";
    // Every failure below is a StoreError naming the file: the fronts only render it.
    this.db = guardedDb(db, this.file, this.opts.freeBytes);
    migrate(this.db, this.file);
    this.batches = new BatchRecords(this.db, () => this.now(), opts.isAlive);
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
    this.write(() => insertSession(this.db, s, "running", this.now()));
  }

  queueRun(s: NewSession, run: QueuedRun): number {
    return this.write(() => {
      if (!this.db.get("SELECT 1 AS x FROM sessions WHERE id = ?", [s.id]))
        insertSession(this.db, s, "queued", this.now());
      return insertRun(this.db, s.id, { ...run, status: "queued" }, this.now());
    });
  }

  /** Refuses a session with a run (other than `except`) running or queued under a live owner. */
  private refuseBusy(sessionId: string, except?: number): void {
    const open = this.db.all<{
      id: number;
      status: RunRecord["status"];
      owner_pid: number | null;
      owner_start: string | null;
    }>("SELECT id, status, owner_pid, owner_start FROM runs WHERE session_id = ? AND status IN ('running', 'queued')", [
      sessionId,
    ]);
    const busy = (r: (typeof open)[number]) =>
      r.id !== except &&
      busyRun({ status: r.status, ownerPid: r.owner_pid, ownerStart: r.owner_start }, this.opts.isAlive);
    if (open.some(busy)) throw new Error(resumeRunningMessage(sessionId));
  }

  startQueued(runId: number, run: NewRun): void {
    this.write(() => {
      const row = this.db.get<{ session_id: string; status: string }>(
        "SELECT session_id, status FROM runs WHERE id = ?",
        [runId],
      );
      if (row?.status !== "queued") throw new Error(`run ${runId} is not waiting to start`);
      this.refuseBusy(row.session_id, runId);
      this.db.run(
        "UPDATE runs SET status = 'running', prompt = ?, started_at = ?, owner_start = ?, pi = ?, sandbox = ?, runner = ? WHERE id = ?",
        [
          run.prompt,
          this.now(),
          run.ownerStart ?? null,
          run.pi ?? null,
          run.sandbox === undefined ? null : Number(run.sandbox),
          run.runner ?? null,
          runId,
        ],
      );
      setSessionStatus(this.db, row.session_id, "running", this.now(), run.name);
    });
  }

  startRun(sessionId: string, run: NewRun): number {
    return this.write(() => {
      this.refuseBusy(sessionId);
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

  setRunIsolation(runId: number, isolation: IsolationResult): void {
    this.write(() => this.db.run("UPDATE runs SET isolation = ? WHERE id = ?", [JSON.stringify(isolation), runId]));
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
    return getSession(this.db, id);
  }

  getMessages(runId: number): StoredMessage[] {
    return getMessages(this.db, runId);
  }

  listSessions(opts: { limit: number; offset?: number }): SessionSummary[] {
    return listSessions(this.db, opts);
  }

  hasSessionsIn(folder: string): boolean {
    const top = folder.replace(/\/+$/, "") || "/";
    // Below it: `top/` as a prefix (substr, not LIKE: a folder's `%` and `_` are no wildcards).
    const below = top === "/" ? "/" : `${top}/`;
    return !!this.db.get("SELECT 1 AS x FROM sessions WHERE cwd = ? OR substr(cwd, 1, ?) = ? LIMIT 1", [
      top,
      below.length,
      below,
    ]);
  }

  /** What runs started since `since` spent, by agent, day or folder (`subagents usage`). */
  usage(opts: { since: number; by: UsageBy }): UsageRow[] {
    return usageSummary(this.db, opts);
  }

  /** The latest session a schedule started (`subagents schedule list`). */
  lastOfSchedule(schedule: string): ReturnType<typeof lastOfSchedule> {
    return lastOfSchedule(this.db, schedule);
  }

  parentUsage(parentSession: string): { spawns: number; cost: number } {
    return parentUsage(this.db, parentSession);
  }

  ownerAlive(owner: RunOwner): boolean {
    return this.opts.isAlive(owner);
  }

  recoverStale(): number {
    const isAlive = this.opts.isAlive;
    // Two queries, one per partial index (runs_running, runs_queued).
    const open = ["running", "queued"].flatMap((status) =>
      this.db.all<{
        id: number;
        session_id: string;
        owner_pid: number | null;
        owner_start: string | null;
        status: string;
      }>("SELECT id, session_id, owner_pid, owner_start, status FROM runs WHERE status = ?", [status]),
    );
    const dead = open.filter((r) => {
      const owner = ownerOf({ ownerPid: r.owner_pid, ownerStart: r.owner_start });
      return owner === null || !isAlive(owner);
    });
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
