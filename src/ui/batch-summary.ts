// A batch job in a few lines (docs/batch.md): one summary — bar, counts, rate, ETA, spend, the items under way, the
// last failures — for the CLI's live view, `batch status` and the pi/MCP tool. Never a window per item.
import type { ShardProgress, SlurmState } from "../core/batch/job.ts";
import type { JobProgress } from "../core/batch/run-job.ts";
import type { BatchItem, BatchJob, BatchJobStatus, BatchRecords, JobCounts } from "../core/store/batch-records.ts";
import { age } from "./format.ts";
import { clip, sanitizeLine } from "./text-width.ts";
import type { Style } from "./windows.ts";

const BAR = 24;

/** Items ended per second since the run started, and the seconds left at that rate (null: not known yet). */
export function rateOf(c: JobCounts, elapsedMs: number): { rate: number; etaSec: number | null } {
  const rate = elapsedMs > 0 ? c.endedThisRun / (elapsedMs / 1000) : 0;
  const left = c.pending + c.running;
  return { rate, etaSec: rate > 0 ? Math.round(left / rate) : left ? null : 0 };
}

const dollars = (n: number) => `$${n.toFixed(n < 1 ? 4 : 2)}`;

/** `[████░░░░] 612/1000 61%  ✓ 600  ✗ 12  ● 16  · 372  12.3/s  ETA 31s  $0.4200` (no ETA for a job nobody runs) */
export function countsLine(c: JobCounts, elapsedMs: number, style: Style, spent = c.cost, running = true): string {
  const done = c.completed + c.failed;
  const filled = c.total ? Math.round((done / c.total) * BAR) : BAR;
  const bar = `[${"█".repeat(filled)}${"░".repeat(BAR - filled)}]`;
  const pct = c.total ? Math.floor((done / c.total) * 100) : 100;
  const { rate, etaSec } = rateOf(c, elapsedMs);
  return [
    bar,
    `${done}/${c.total} ${pct}%`,
    style.green(`✓ ${c.completed}`),
    c.failed ? style.red(`✗ ${c.failed}`) : `✗ 0`,
    `● ${c.running}`,
    `· ${c.pending}`,
    `${rate.toFixed(1)}/s`,
    ...(running && etaSec !== null && (c.pending || c.running) ? [`ETA ${age(etaSec * 1000)}`] : []),
    dollars(spent),
  ].join("  ");
}

/** The live view: the counts, the items under way (as many as fit `rows`), the last failures. */
export function progressLines(p: JobProgress, now: number, width: number, rows: number, style: Style): string[] {
  let live = 0;
  for (const c of p.live.values()) live += c;
  const lines = [
    clip(
      `${style.bold(`batch ${p.job}`)}  ${countsLine(p.counts, now - p.startedAt, style, p.counts.cost + live)}`,
      width,
    ),
  ];
  const failures = p.failures.map((f) =>
    clip(style.red(`  ✗ ${f.id}: ${sanitizeLine(f.error)}${f.final ? "" : " (to retry)"}`), width),
  );
  const room = Math.max(1, rows - 1 - failures.length - (p.stoppedBy ? 1 : 0));
  const running = [...p.running.values()];
  const shown = running.length > room ? running.slice(0, room - 1) : running;
  for (const r of shown) {
    const attempt = r.attempt > 1 ? ` (attempt ${r.attempt})` : "";
    const activity = r.activity ? `  ${style.dim(sanitizeLine(r.activity))}` : "";
    lines.push(clip(`  ● ${r.id}${attempt}  ${age(now - r.startedAt)}${activity}`, width));
  }
  if (running.length > shown.length) lines.push(style.dim(`  … ${running.length - shown.length} more running`));
  lines.push(...failures);
  if (p.stoppedBy) lines.push(style.yellow(`  no more items start: ${p.stoppedBy}`));
  return lines;
}

/** A recorded job as `batch status` and the batch tool show it. */
export type JobStatusView = {
  /** A job whose owner died while running is stopped, whatever its record still says. */
  status: BatchJobStatus;
  /** Its owner is alive and runs it now. */
  live: boolean;
  /** Items an owner that is gone left running wait again (pending). */
  counts: JobCounts;
  elapsedMs: number;
  rate: number;
  /** Seconds left at the rate, while it runs (null otherwise, or not known yet). */
  etaSec: number | null;
  failures: Pick<BatchItem, "id" | "status" | "attempts" | "error">[];
  /** A job submitted to Slurm: where its array tasks stand and each shard's results so far. */
  slurm?: { state: SlurmState; shards: ShardProgress[] };
};

/** What status shows of a recorded job; a submitted one's progress is its shards' (`submitted`: read by the front
 *  from their result files and squeue). */
export function jobStatus(
  records: BatchRecords,
  job: BatchJob,
  now: number,
  submitted?: { state: SlurmState; shards: ShardProgress[] },
): JobStatusView {
  if (job.slurm && submitted) return submittedStatus(job, now, submitted);
  const raw = records.counts(job.id);
  const live = records.ownerLive(job);
  const counts = live ? raw : { ...raw, pending: raw.pending + raw.running, running: 0 };
  const elapsedMs = (live ? now : job.updatedAt) - (job.startedAt ?? job.createdAt);
  const { rate, etaSec } = rateOf(counts, elapsedMs);
  return {
    status: job.status === "running" && !live ? "stopped" : job.status,
    live,
    counts,
    elapsedMs,
    rate,
    etaSec: live ? etaSec : null,
    failures: records.lastFailures(job.id, 3),
  };
}

/** A submitted job's progress from its shards' result files: what finished (and spent) so far, against the items
 *  each shard got when it was submitted; it runs while Slurm still lists one of its array tasks. */
function submittedStatus(
  job: BatchJob,
  now: number,
  submitted: { state: SlurmState; shards: ShardProgress[] },
): JobStatusView {
  const { shards, state } = submitted;
  const sum = (f: (s: ShardProgress) => number) => shards.reduce((n, s) => n + f(s), 0);
  const completed = sum((s) => s.completed);
  const failed = sum((s) => s.failed);
  const total = Math.max(job.slurm?.items?.reduce((n, i) => n + i, 0) ?? 0, completed + failed);
  const live = typeof state === "object";
  const counts: JobCounts = {
    pending: total - completed - failed,
    running: 0,
    completed,
    failed,
    total,
    cost: sum((s) => s.cost),
    endedThisRun: completed + failed,
  };
  // From its latest submission (a resubmitted job's shards go on from their records).
  const elapsedMs = now - job.updatedAt;
  const { rate, etaSec } = rateOf(counts, elapsedMs);
  return {
    status: live ? "submitted" : counts.pending ? "stopped" : "done",
    live,
    counts,
    elapsedMs,
    rate,
    etaSec: live ? etaSec : null,
    failures: shards
      .flatMap((s) => s.failures.map((f) => ({ ...f, status: "failed" as const })))
      .slice(-3)
      .reverse(),
    slurm: submitted,
  };
}

const slurmLine = (jobId: string, state: SlurmState) =>
  state === "unknown"
    ? `slurm job ${jobId} (squeue cannot be asked here)`
    : state === "ended"
      ? `slurm job ${jobId}: ended`
      : `slurm job ${jobId}: ${state.running} running, ${state.pending} queued`;

export function statusLines(job: BatchJob, v: JobStatusView, style: Style): string[] {
  const items = job.slurm?.items;
  return [
    `batch ${job.id}: ${v.status}${v.live && job.owner ? ` (pid ${job.owner.pid})` : ""} · ${job.items}`,
    `  ${countsLine(v.counts, v.elapsedMs, style, v.counts.cost, v.live)}`,
    ...(job.slurm && v.slurm
      ? [
          `  ${slurmLine(job.slurm.jobId, v.slurm.state)}`,
          ...v.slurm.shards.map((s) => {
            const of = items ? `/${items[s.index - 1]}` : "";
            const done = s.written
              ? `${s.completed + s.failed}${of}  ✓ ${s.completed}  ✗ ${s.failed}`
              : "no results yet";
            return `  shard ${s.index}/${job.slurm?.shards}: ${done}  → ${s.file}`;
          }),
        ]
      : job.slurm
        ? [`  slurm job ${job.slurm.jobId}, ${job.slurm.shards} shards → ${job.slurm.out}.<I>`]
        : []),
    ...v.failures.map((f) => `  ✗ ${f.id} (${f.status}, attempt ${f.attempts}): ${sanitizeLine(f.error ?? "")}`),
  ];
}
