// `subagents batch ITEMS --prompt TEMPLATE`, and `batch status|export|submit|merge` (docs/batch.md): one prompt over
// the items of a file, recorded before it starts and resumed by running the same command again.
import { rateOf, countsLine } from "../../ui/batch-summary.ts";
import { plainStyle } from "../../ui/windows.ts";
import { CSV_COLUMNS, csvRow } from "../../core/batch/lines.ts";
import { EXIT, UsageError } from "../errors.ts";
import { parse } from "../flags/args.ts";
import { BATCH_EXPORT_FLAGS, BATCH_STATUS_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { BATCH_EXPORT_HELP, BATCH_HELP, BATCH_STATUS_HELP } from "../help.ts";
import { writeJson } from "../terminal/report.ts";
import { finishedLines } from "../batch/out-file.ts";
import { BATCH_OPTIONS, runBatch } from "../batch/run-batch.ts";
import { csvLine } from "../batch/csv.ts";
import { findJob } from "../batch/find-job.ts";

export async function cmdBatch(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) {
    console.log(BATCH_HELP);
    return EXIT.usage;
  }
  if (sub === "status") return batchStatus(rest);
  if (sub === "export") return batchExport(rest);
  if (sub === "submit") return (await import("../batch/slurm-submit.ts")).batchSubmit(rest);
  if (sub === "merge") return (await import("../batch/merge.ts")).batchMerge(rest);
  const { values, positionals } = parse("batch", argv, BATCH_OPTIONS);
  if (values.help) {
    console.log(BATCH_HELP);
    return EXIT.ok;
  }
  return runBatch(argv, values, positionals);
}

function batchStatus(argv: string[]): number {
  const { values, positionals } = parse("batch status", argv, parseOptions(BATCH_STATUS_FLAGS));
  if (values.help) {
    console.log(BATCH_STATUS_HELP);
    return EXIT.ok;
  }
  if (positionals.length > 1) throw new UsageError("batch status: give at most one job.");
  const { job, store } = findJob("batch status", positionals[0]);
  const counts = store.batches.counts(job.id);
  const live = store.batches.ownerLive(job);
  // A job whose owner died while running is stopped, whatever its record still says.
  const status = job.status === "running" && !live ? "stopped" : job.status;
  const elapsed = (live ? Date.now() : job.updatedAt) - (job.startedAt ?? job.createdAt);
  const { rate, etaSec } = rateOf(counts, elapsed);
  const failures = store.batches.lastFailures(job.id, 3);
  if (values.json) {
    writeJson({
      type: "batch",
      job: job.id,
      status,
      items: job.items,
      ...(live ? { ownerPid: job.owner!.pid } : {}),
      counts: {
        pending: counts.pending,
        running: live ? counts.running : 0,
        completed: counts.completed,
        failed: counts.failed,
        total: counts.total,
      },
      cost: counts.cost,
      rate,
      etaSec: live ? etaSec : null,
      ...(job.slurm ? { slurm: job.slurm } : {}),
      lastFailures: failures.map((f) => ({ id: f.id, status: f.status, error: f.error, attempts: f.attempts })),
    });
    return EXIT.ok;
  }
  console.log(`batch ${job.id}: ${status}${live ? ` (pid ${job.owner!.pid})` : ""} · ${job.items}`);
  console.log(
    `  ${countsLine(live ? counts : { ...counts, pending: counts.pending + counts.running, running: 0 }, elapsed, plainStyle)}`,
  );
  if (job.slurm) console.log(`  slurm job ${job.slurm.jobId}, ${job.slurm.shards} shards → ${job.slurm.out}.<I>`);
  for (const f of failures) console.log(`  ✗ ${f.id} (${f.status}, attempt ${f.attempts}): ${f.error}`);
  return EXIT.ok;
}

function batchExport(argv: string[]): number {
  const { values, positionals } = parse("batch export", argv, parseOptions(BATCH_EXPORT_FLAGS));
  if (values.help) {
    console.log(BATCH_EXPORT_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError("batch export: name the job (see 'subagents batch status').");
  const { job, store } = findJob("batch export", positionals[0]);
  let chunk = values.csv ? `${csvLine(CSV_COLUMNS)}\n` : "";
  for (const line of finishedLines(store.batches, job.id, !!values.all)) {
    chunk += values.csv ? `${csvLine(csvRow(line))}\n` : `${JSON.stringify(line)}\n`;
    if (chunk.length > 1 << 16) {
      process.stdout.write(chunk);
      chunk = "";
    }
  }
  process.stdout.write(chunk);
  return EXIT.ok;
}
