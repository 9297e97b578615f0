// One run of a batch job on the call runner (core/call/stream.ts): its pending items, in file order, each a task
// made from the job's prepared task with the item's prompt and a session of its own; a failure worth retrying runs
// again while the item has attempts left; the job's budget stops new items. What it keeps is the running items and
// the job's counters: everything else is in the store (store/batch-records.ts).
import type { Engine } from "../run/engine.ts";
import type { ResolvedTask } from "../run/task-types.ts";
import { runStream, type StreamOptions } from "../call/stream.ts";
import type { Refusal } from "../call/request.ts";
import type { BatchItemStatus, BatchRecords, JobCounts } from "../store/batch-records.ts";
import { attemptEnd, RETRYABLE_CODES, type JobSpec } from "./job.ts";
import { itemLine, type ItemLine } from "./lines.ts";

/** An item under way, for the live view. */
export type RunningItem = { id: string; sessionId: string; attempt: number; startedAt: number; activity?: string };

/** What a front shows while the job runs (one summary, never a window per item). */
export type JobProgress = {
  job: string;
  counts: JobCounts;
  /** Items under way, by session id. */
  running: Map<string, RunningItem>;
  /** The latest failures (final or to retry), newest first, at most a few. */
  failures: { id: string; error: string; final: boolean }[];
  startedAt: number;
  /** Spend of the items under way, by session id. */
  live: Map<string, number>;
  /** Why no more items start, once something stopped them (the budget, the caps, a stop). */
  stoppedBy?: string;
};

export type JobEnd = { counts: JobCounts; stoppedBy?: string; elapsedMs: number };

const LAST_FAILURES = 3;

export type JobRun = {
  engine: Engine;
  records: BatchRecords;
  job: string;
  spec: JobSpec;
  /** The job's task, prepared once (prepare.ts): every item runs as it with its own prompt and session. */
  task: ResolvedTask;
  retryFailed?: boolean;
  /** Every finished item (completed, or failed for good), as it finishes. */
  onFinished?: (line: ItemLine) => void;
  /** Something changed (the view redraws on its own tick). */
  onChange?: () => void;
} & Omit<StreamOptions, "concurrency" | "maxCost" | "spentBefore" | "onRefusal">;

/** Ready to run: items in flight when an earlier owner died, and failures worth retrying, run again. */
export function prepareJobRun(records: BatchRecords, job: string, pass: number, spec: JobSpec, retryFailed = false) {
  records.prepareRun(job, pass, { maxAttempts: spec.maxAttempts, retryable: RETRYABLE_CODES, retryFailed });
}

export function newProgress(records: BatchRecords, job: string, now: number): JobProgress {
  return { job, counts: records.counts(job), running: new Map(), failures: [], startedAt: now, live: new Map() };
}

/** Dollars spent by the job: what its items recorded, and what the running ones spent so far. */
export function jobSpent(p: JobProgress): number {
  let live = 0;
  for (const c of p.live.values()) live += c;
  return p.counts.cost + live;
}

export async function runJob(r: JobRun, progress: JobProgress): Promise<JobEnd> {
  const { records, job, spec, engine } = r;
  const now = () => engine.clock.now();
  let cursor = 0;
  let page: { id: string; seq: number; prompt: string; attempts: number }[] = [];
  let wake: (() => void) | null = null;
  /** The session of each task under way, by the index the stream gave it. */
  const sessionOfIndex = new Map<number, string>();
  const stopWith = (why: string) => {
    progress.stoppedBy ??= why;
    r.onChange?.();
  };
  const budgetSpent = () => spec.maxCost !== undefined && jobSpent(progress) >= spec.maxCost;
  const move = (from: BatchItemStatus | null, to: BatchItemStatus | null) => {
    if (from) progress.counts[from]--;
    if (to) progress.counts[to]++;
  };

  const next = async (): Promise<ResolvedTask | null> => {
    for (;;) {
      if (r.signal?.aborted) return null;
      if (budgetSpent()) {
        stopWith(`the job's budget of $${spec.maxCost} is spent`);
        return null;
      }
      if (!page.length) page = records.pending(job, cursor, 64);
      const row = page.shift();
      if (row) {
        cursor = row.seq;
        const sessionId = engine.store.newSessionId();
        records.start(job, row.id, sessionId);
        move("pending", "running");
        progress.running.set(sessionId, { id: row.id, sessionId, attempt: row.attempts + 1, startedAt: now() });
        r.onChange?.();
        return { ...r.task, name: row.id, prompt: row.prompt, sessionId };
      }
      // Past the last pending item: items to retry were put back behind us; while some run, one may be.
      if (!progress.running.size) {
        if (!records.pending(job, 0, 1).length) return null;
        cursor = 0;
        continue;
      }
      await new Promise<void>((resolve) => {
        const before = wake;
        wake = () => {
          before?.();
          resolve();
        };
      });
      cursor = 0;
    }
  };

  await runStream(engine, next, {
    ...r,
    concurrency: spec.concurrency,
    maxCost: spec.maxCost,
    spentBefore: progress.counts.cost,
    onRefusal: (refusal: Refusal) => stopWith(refusal.message),
    onEvent: (e) => {
      r.onEvent?.(e);
      if (e.type === "taskStart") sessionOfIndex.set(e.index, e.task.sessionId);
      if (e.type === "taskProgress") {
        const item = progress.running.get(sessionOfIndex.get(e.index) ?? "");
        if (!item) return;
        progress.live.set(item.sessionId, e.state.usage.cost);
        item.activity = e.state.lastText.split("\n")[0];
        return;
      }
      if (e.type !== "taskEnd") return;
      sessionOfIndex.delete(e.index);
      const item = progress.running.get(e.outcome.sessionId);
      if (!item) return;
      progress.running.delete(item.sessionId);
      progress.live.delete(item.sessionId);
      const { end, uncount } = attemptEnd(e.outcome, item.attempt, {
        maxAttempts: spec.maxAttempts,
        stopping: !!r.signal?.aborted,
        budgetSpent: budgetSpent(),
      });
      records.finish(job, item.id, end, uncount);
      if (uncount && !r.signal?.aborted) stopWith(e.outcome.result.error ?? "the budget is spent");
      move("running", end.status);
      progress.counts.cost += end.usage.cost;
      if (end.status !== "completed" && !uncount)
        progress.failures = [
          { id: item.id, error: end.error ?? "failed", final: end.status === "failed" },
          ...progress.failures,
        ].slice(0, LAST_FAILURES);
      if (end.status === "completed" || end.status === "failed") {
        progress.counts.endedThisRun++;
        const recorded = records.item(job, item.id);
        if (recorded) r.onFinished?.(itemLine(recorded));
      }
      const woken = wake;
      wake = null;
      woken?.();
      r.onChange?.();
    },
  });
  if (r.signal?.aborted) stopWith("stopped");
  const counts = records.counts(job);
  records.release(job, counts.pending || counts.running ? "stopped" : "done");
  return { counts: records.counts(job), stoppedBy: progress.stoppedBy, elapsedMs: now() - progress.startedAt };
}
