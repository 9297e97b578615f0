// What `subagents batch` shows while its job runs: on a terminal one live summary (ui/batch-summary.ts) redrawn in
// place; elsewhere a progress line every ten seconds; nothing with --json or --quiet but the end.
import type { JobSpec } from "../../core/batch/job.ts";
import type { JobEnd, JobProgress } from "../../core/batch/run-job.ts";
import { countsLine, progressLines, rateOf } from "../../ui/batch-summary.ts";
import type { Style } from "../../ui/windows.ts";
import { LiveDisplay } from "../terminal/live.ts";

const PLAIN_EVERY_MS = 10_000;

class SummaryDisplay extends LiveDisplay {
  constructor(
    private readonly lines: (width: number, rows: number) => string[],
    style: Style,
    out: NodeJS.WriteStream,
  ) {
    super(() => [], { maxLines: 0, style }, out);
  }

  protected override frame(): string[] {
    return this.lines(Math.max(20, this.cols - 1), Math.max(3, this.rows - 2));
  }
}

export class BatchView {
  private live: SummaryDisplay | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private noteText: string | null = null;

  constructor(
    private readonly progress: JobProgress,
    private readonly spec: JobSpec,
    private readonly style: Style,
    private readonly o: { quiet: boolean; out: NodeJS.WriteStream },
  ) {}

  private say(line: string): void {
    this.o.out.write(`${line}\n`);
  }

  started(out?: string): void {
    const c = this.progress.counts;
    const before = c.completed + c.failed;
    this.say(
      `batch ${this.progress.job}: ${c.total} item${c.total === 1 ? "" : "s"}, ${c.pending} to run${before ? ` (${before} finished before)` : ""} · concurrency ${this.spec.concurrency}${out ? ` · results to ${out}` : ""}`,
    );
  }

  start(): void {
    if (this.o.quiet) return;
    if (this.o.out.isTTY) {
      this.live = new SummaryDisplay(
        (width, rows) => [
          ...progressLines(this.progress, Date.now(), width, rows - (this.noteText ? 1 : 0), this.style),
          ...(this.noteText ? [this.style.yellow(this.noteText)] : []),
        ],
        this.style,
        this.o.out,
      );
      this.live.start();
      return;
    }
    this.timer = setInterval(() => this.say(this.line()), PLAIN_EVERY_MS);
    this.timer.unref?.();
  }

  private line(): string {
    return `batch ${this.progress.job}: ${countsLine(this.progress.counts, Date.now() - this.progress.startedAt, this.style)}`;
  }

  note(text: string): void {
    this.noteText = text;
    if (!this.live && !this.o.quiet) this.say(this.style.yellow(text));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.live?.stop(progressLines(this.progress, Date.now(), this.o.out.columns || 100, 12, this.style));
    this.live = null;
  }

  final(end: JobEnd, out?: string): void {
    const c = end.counts;
    const left = c.pending + c.running;
    const state = left ? "stopped" : "done";
    this.say(
      `batch ${this.progress.job} ${state}: ${c.completed} completed, ${c.failed} failed${left ? `, ${left} not run` : ""} in ${(end.elapsedMs / 1000).toFixed(1)}s · $${c.cost.toFixed(4)}${out ? ` · results: ${out}` : ""}`,
    );
    // The job's budget counts its earlier runs: the same command would stop again at once.
    const spent = this.spec.maxCost !== undefined && c.cost >= this.spec.maxCost;
    const again = spent ? "run it again with a larger --max-cost to go on" : "run the same command again to go on";
    if (end.stoppedBy && left) this.say(this.style.yellow(`stopped: ${end.stoppedBy}; ${again}`));
    else if (c.failed)
      this.say(
        `failed items: status "failed" in the results (subagents batch export ${this.progress.job}); --retry-failed runs them again`,
      );
  }
}

export function summaryJson(job: string, end: JobEnd, out?: string) {
  const c = end.counts;
  return {
    type: "summary",
    job,
    status: c.pending + c.running ? "stopped" : "done",
    counts: { completed: c.completed, failed: c.failed, pending: c.pending + c.running, total: c.total },
    cost: c.cost,
    elapsedMs: end.elapsedMs,
    rate: rateOf(c, end.elapsedMs).rate,
    ...(end.stoppedBy ? { stoppedBy: end.stoppedBy } : {}),
    ...(out ? { out } : {}),
  };
}
