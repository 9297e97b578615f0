// A batch job's records (`subagents batch`, docs/batch.md): the job, and one row per item with its status, attempts,
// session, result and spend. The job is recorded before any item starts, so running the same command again resumes
// it: items done with the same key are kept, items in flight when the owner died and failed ones with attempts left
// run again, an item whose key changed (its prompt, agent, model or schema) starts over. Every write is one
// transaction (store-tx.ts); reads go by pages, so a job of any size never sits in memory.
import type { Db } from "../host.ts";
import { addUsage, type Usage } from "../types.ts";
import { writeTx } from "./store-tx.ts";
import type { OwnerAlive, RunOwner } from "./store-types.ts";

/** `pending`: to run (again); `running`: its sub-agent is under way; `completed` and `failed` are final. */
export type BatchItemStatus = "pending" | "running" | "completed" | "failed";
export const ITEM_STATUSES: readonly BatchItemStatus[] = ["pending", "running", "completed", "failed"];

/** `running` while an owner works on it; `done` once no item is pending; `stopped` when it ended before that. */
export type BatchJobStatus = "running" | "done" | "stopped" | "submitted";

export type BatchJob = {
  id: string;
  /** The items file, as the job read it (absolute). */
  items: string;
  /** What the job runs (core/batch/job.ts JobSpec), as JSON. */
  spec: Record<string, unknown>;
  status: BatchJobStatus;
  /** Which run of the job read the items file last. */
  pass: number;
  owner: RunOwner | null;
  /** A job submitted to Slurm (`batch submit`): its job id, shards and result files (`out`.I), and how many items
   *  each shard got (`items`[I-1]; absent for a job submitted before it was counted). */
  slurm?: { jobId: string; shards: number; out: string; items?: number[] };
  createdAt: number;
  updatedAt: number;
  /** When its latest run started (rate and ETA count from here). */
  startedAt?: number;
};

/** One item as its run reads it from the file. */
export type ItemEntry = { id: string; seq: number; key: string; prompt: string };

export type BatchItem = {
  id: string;
  seq: number;
  status: BatchItemStatus;
  attempts: number;
  sessionId?: string;
  result?: string;
  data?: unknown;
  error?: string;
  errorCode?: string;
  usage?: Usage;
  cost: number;
  startedAt?: number;
  endedAt?: number;
};

/** How one attempt of an item ended. */
export type ItemEnd = {
  status: BatchItemStatus;
  result?: string;
  data?: unknown;
  error?: string;
  errorCode?: string;
  usage: Usage;
};

export type JobCounts = Record<BatchItemStatus, number> & {
  total: number;
  cost: number;
  /** Items that ended since the latest run started (the rate's numerator). */
  endedThisRun: number;
};

type ItemRow = {
  item_id: string;
  seq: number;
  status: string;
  attempts: number;
  session_id: string | null;
  result: string | null;
  data: string | null;
  error: string | null;
  error_code: string | null;
  usage: string | null;
  cost: number;
  started_at: number | null;
  ended_at: number | null;
};

type JobRow = {
  id: string;
  items: string;
  spec: string;
  status: string;
  pass: number;
  owner_pid: number | null;
  owner_start: string | null;
  slurm: string | null;
  created_at: number;
  updated_at: number;
  started_at: number | null;
};

const toJob = (r: JobRow): BatchJob => ({
  id: r.id,
  items: r.items,
  spec: JSON.parse(r.spec),
  status: r.status as BatchJobStatus,
  pass: r.pass,
  owner: r.owner_pid === null ? null : { pid: r.owner_pid, start: r.owner_start },
  ...(r.slurm ? { slurm: JSON.parse(r.slurm) } : {}),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  ...(r.started_at !== null ? { startedAt: r.started_at } : {}),
});

const toItem = (r: ItemRow): BatchItem => ({
  id: r.item_id,
  seq: r.seq,
  status: r.status as BatchItemStatus,
  attempts: r.attempts,
  ...(r.session_id ? { sessionId: r.session_id } : {}),
  ...(r.result !== null ? { result: r.result } : {}),
  ...(r.data !== null ? { data: JSON.parse(r.data) } : {}),
  ...(r.error !== null ? { error: r.error } : {}),
  ...(r.error_code !== null ? { errorCode: r.error_code } : {}),
  ...(r.usage !== null ? { usage: JSON.parse(r.usage) } : {}),
  cost: r.cost,
  ...(r.started_at !== null ? { startedAt: r.started_at } : {}),
  ...(r.ended_at !== null ? { endedAt: r.ended_at } : {}),
});

const ITEM_COLUMNS =
  "item_id, seq, status, attempts, session_id, result, data, error, error_code, usage, cost, started_at, ended_at";

export class BatchRecords {
  constructor(
    private readonly db: Db,
    private readonly now: () => number,
    private readonly isAlive: OwnerAlive,
  ) {}

  private write<T>(fn: () => T): T {
    return writeTx(this.db, fn);
  }

  job(id: string): BatchJob | null {
    const r = this.db.get<JobRow>("SELECT * FROM batch_jobs WHERE id = ?", [id]);
    return r ? toJob(r) : null;
  }

  /** Jobs, the latest first. */
  jobs(limit = 20): BatchJob[] {
    return this.db
      .all<JobRow>("SELECT * FROM batch_jobs ORDER BY updated_at DESC, rowid DESC LIMIT ?", [limit])
      .map(toJob);
  }

  /** Whether a job's recorded owner is still that process. */
  ownerLive(job: BatchJob): boolean {
    return !!job.owner && this.isAlive(job.owner);
  }

  /**
   * Takes the job for this owner (creating it): its next pass, or the live owner that has it already. What the
   * job runs (`spec`) is what this run says.
   */
  claim(
    id: string,
    items: string,
    spec: Record<string, unknown>,
    owner: RunOwner,
  ): { pass: number } | { busy: RunOwner } {
    return this.write(() => {
      const row = this.db.get<JobRow>("SELECT * FROM batch_jobs WHERE id = ?", [id]);
      const now = this.now();
      if (row) {
        const job = toJob(row);
        if (job.owner && job.owner.pid !== owner.pid && job.status === "running" && this.isAlive(job.owner))
          return { busy: job.owner };
        this.db.run(
          "UPDATE batch_jobs SET items = ?, spec = ?, status = 'running', pass = pass + 1, owner_pid = ?, owner_start = ?, updated_at = ?, started_at = ? WHERE id = ?",
          [items, JSON.stringify(spec), owner.pid, owner.start, now, now, id],
        );
        return { pass: job.pass + 1 };
      }
      this.db.run(
        "INSERT INTO batch_jobs (id, items, spec, status, pass, owner_pid, owner_start, created_at, updated_at, started_at) VALUES (?, ?, ?, 'running', 1, ?, ?, ?, ?, ?)",
        [id, items, JSON.stringify(spec), owner.pid, owner.start, now, now, now],
      );
      return { pass: 1 };
    });
  }

  /** Records a job that runs elsewhere (`batch submit`): no owner here, its Slurm job beside it. */
  submitted(id: string, items: string, spec: Record<string, unknown>, slurm: BatchJob["slurm"]): void {
    const now = this.now();
    this.write(() =>
      this.db.run(
        `INSERT INTO batch_jobs (id, items, spec, status, pass, slurm, created_at, updated_at) VALUES (?, ?, ?, 'submitted', 0, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET items = excluded.items, spec = excluded.spec, status = 'submitted',
           slurm = excluded.slurm, updated_at = excluded.updated_at`,
        [id, items, JSON.stringify(spec), JSON.stringify(slurm), now, now],
      ),
    );
  }

  /**
   * Records a page of items read from the file in this pass: new ones pending; a known one keeps its state when its
   * key is the same, else starts over (pending, no attempts, no result). Returns the ids seen twice in this pass.
   */
  record(jobId: string, pass: number, entries: readonly ItemEntry[]): string[] {
    const twice: string[] = [];
    this.write(() => {
      for (const e of entries) {
        const { changes } = this.db.run(
          `INSERT INTO batch_items (job_id, item_id, seq, key, prompt, status, pass) VALUES (?, ?, ?, ?, ?, 'pending', ?)
           ON CONFLICT(job_id, item_id) DO UPDATE SET
             seq = excluded.seq, pass = excluded.pass, prompt = excluded.prompt, key = excluded.key,
             status = CASE WHEN key = excluded.key THEN status ELSE 'pending' END,
             attempts = CASE WHEN key = excluded.key THEN attempts ELSE 0 END,
             session_id = CASE WHEN key = excluded.key THEN session_id END,
             result = CASE WHEN key = excluded.key THEN result END,
             data = CASE WHEN key = excluded.key THEN data END,
             error = CASE WHEN key = excluded.key THEN error END,
             error_code = CASE WHEN key = excluded.key THEN error_code END,
             usage = CASE WHEN key = excluded.key THEN usage END,
             cost = CASE WHEN key = excluded.key THEN cost ELSE 0 END,
             ended_at = CASE WHEN key = excluded.key THEN ended_at END
           WHERE pass != excluded.pass`,
          [jobId, e.id, e.seq, e.key, e.prompt, pass],
        );
        if (changes === 0) twice.push(e.id);
      }
    });
    return twice;
  }

  /**
   * Makes the job ready to run after its file was read in `pass`: items no longer in the file are dropped, items in
   * flight when an earlier owner died run again, failed ones whose failure is worth retrying (or all of them with
   * `retryFailed`) run again while they have attempts left.
   */
  prepareRun(
    jobId: string,
    pass: number,
    o: { maxAttempts: number; retryable: readonly string[]; retryFailed?: boolean },
  ): void {
    this.write(() => {
      this.db.run("DELETE FROM batch_items WHERE job_id = ? AND pass != ?", [jobId, pass]);
      this.db.run("UPDATE batch_items SET status = 'pending' WHERE job_id = ? AND status = 'running'", [jobId]);
      if (o.retryFailed)
        this.db.run("UPDATE batch_items SET status = 'pending', attempts = 0 WHERE job_id = ? AND status = 'failed'", [
          jobId,
        ]);
      const codes = o.retryable.map(() => "?").join(", ");
      this.db.run(
        `UPDATE batch_items SET status = 'pending' WHERE job_id = ? AND status = 'failed' AND attempts < ? AND error_code IN (${codes})`,
        [jobId, o.maxAttempts, ...o.retryable],
      );
    });
  }

  /** The next pending items after `afterSeq`, in file order. */
  pending(
    jobId: string,
    afterSeq: number,
    limit: number,
  ): { id: string; seq: number; prompt: string; attempts: number }[] {
    return this.db
      .all<{ item_id: string; seq: number; prompt: string; attempts: number }>(
        "SELECT item_id, seq, prompt, attempts FROM batch_items WHERE job_id = ? AND status = 'pending' AND seq > ? ORDER BY seq LIMIT ?",
        [jobId, afterSeq, limit],
      )
      .map((r) => ({ id: r.item_id, seq: r.seq, prompt: r.prompt, attempts: r.attempts }));
  }

  /** An attempt of the item starts in this session. */
  start(jobId: string, itemId: string, sessionId: string): void {
    this.write(() =>
      this.db.run(
        "UPDATE batch_items SET status = 'running', attempts = attempts + 1, session_id = ?, started_at = ? WHERE job_id = ? AND item_id = ?",
        [sessionId, this.now(), jobId, itemId],
      ),
    );
  }

  /** An attempt ended: final (completed, failed) or to run again (pending, its last error kept). The item's usage and
   *  cost add up over its attempts (the sums of its sessions' runs). `uncount`: the attempt does not count (a stop, or
   *  money that ran out). */
  finish(jobId: string, itemId: string, end: ItemEnd, uncount = false): void {
    this.write(() => {
      const before = this.db.get<{ usage: string | null }>(
        "SELECT usage FROM batch_items WHERE job_id = ? AND item_id = ?",
        [jobId, itemId],
      );
      const usage = before?.usage ? addUsage(JSON.parse(before.usage), end.usage) : end.usage;
      this.db.run(
        `UPDATE batch_items SET status = ?, result = ?, data = ?, error = ?, error_code = ?, usage = ?, cost = ?,
           ended_at = ?, attempts = attempts - ? WHERE job_id = ? AND item_id = ?`,
        [
          end.status,
          end.result ?? null,
          end.data === undefined ? null : JSON.stringify(end.data),
          end.error ?? null,
          end.errorCode ?? null,
          JSON.stringify(usage),
          usage.cost,
          this.now(),
          uncount ? 1 : 0,
          jobId,
          itemId,
        ],
      );
    });
  }

  /** The job's run ended (or was stopped): no owner any more. An item it took and never ran (the caps refused it
   *  when it was taken) waits again, its attempt not counted. */
  release(jobId: string, status: BatchJobStatus): void {
    this.write(() => {
      this.db.run(
        "UPDATE batch_items SET status = 'pending', attempts = MAX(attempts - 1, 0) WHERE job_id = ? AND status = 'running'",
        [jobId],
      );
      this.db.run(
        "UPDATE batch_jobs SET status = ?, owner_pid = NULL, owner_start = NULL, updated_at = ? WHERE id = ?",
        [status, this.now(), jobId],
      );
    });
  }

  counts(jobId: string): JobCounts {
    const job = this.db.get<{ started_at: number | null }>("SELECT started_at FROM batch_jobs WHERE id = ?", [jobId]);
    const out: JobCounts = { pending: 0, running: 0, completed: 0, failed: 0, total: 0, cost: 0, endedThisRun: 0 };
    const rows = this.db.all<{ status: BatchItemStatus; n: number; cost: number; recent: number }>(
      "SELECT status, COUNT(*) AS n, COALESCE(SUM(cost), 0) AS cost, SUM(ended_at >= ?) AS recent FROM batch_items WHERE job_id = ? GROUP BY status",
      [job?.started_at ?? 0, jobId],
    );
    for (const r of rows) {
      out[r.status] = r.n;
      out.total += r.n;
      out.cost += r.cost;
      if (r.status === "completed" || r.status === "failed") out.endedThisRun += r.recent ?? 0;
    }
    return out;
  }

  /** A page of the job's items after `afterSeq`, in file order (only those of `statuses` when given). */
  page(jobId: string, afterSeq: number, limit: number, statuses?: readonly BatchItemStatus[]): BatchItem[] {
    const only = statuses ? ` AND status IN (${statuses.map(() => "?").join(", ")})` : "";
    return this.db
      .all<ItemRow>(
        `SELECT ${ITEM_COLUMNS} FROM batch_items WHERE job_id = ? AND seq > ?${only} ORDER BY seq LIMIT ?`,
        [jobId, afterSeq, ...(statuses ?? []), limit],
      )
      .map(toItem);
  }

  item(jobId: string, itemId: string): BatchItem | null {
    const r = this.db.get<ItemRow>(`SELECT ${ITEM_COLUMNS} FROM batch_items WHERE job_id = ? AND item_id = ?`, [
      jobId,
      itemId,
    ]);
    return r ? toItem(r) : null;
  }

  /** The latest failures (for the live view and status). */
  lastFailures(jobId: string, limit: number): BatchItem[] {
    return this.db
      .all<ItemRow>(
        `SELECT ${ITEM_COLUMNS} FROM batch_items WHERE job_id = ? AND error IS NOT NULL AND status != 'completed' ORDER BY ended_at DESC LIMIT ?`,
        [jobId, limit],
      )
      .map(toItem);
  }
}
