// `subagents batch ITEMS --prompt TEMPLATE`, and `batch status|export|submit|merge` (docs/batch.md): one prompt over
// the items of a file, recorded before it starts and resumed by running the same command again.
import { jobStatus, statusLines } from "../../ui/batch-summary.ts";
import { plainStyle } from "../../ui/windows.ts";
import { CSV_COLUMNS, csvRow } from "../../core/batch/lines.ts";
import { EXIT, UsageError } from "../errors.ts";
import { parse } from "../flags/args.ts";
import { BATCH_EXPORT_FLAGS, BATCH_STATUS_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { BATCH_EXPORT_HELP, BATCH_HELP, BATCH_STATUS_HELP } from "../help.ts";
import { writeJson } from "../terminal/report.ts";
import { finishedLines } from "../../core/batch/lines.ts";
import { submittedLines, submittedOf } from "../../host/batch-shards.ts";
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
  const v = jobStatus(store.batches, job, Date.now(), submittedOf(job));
  if (values.json) {
    writeJson({
      type: "batch",
      job: job.id,
      status: v.status,
      items: job.items,
      ...(v.live ? { ownerPid: job.owner!.pid } : {}),
      counts: {
        pending: v.counts.pending,
        running: v.counts.running,
        completed: v.counts.completed,
        failed: v.counts.failed,
        total: v.counts.total,
      },
      cost: v.counts.cost,
      rate: v.rate,
      etaSec: v.etaSec,
      ...(job.slurm ? { slurm: { ...job.slurm, ...(v.slurm ? { state: v.slurm.state } : {}) } } : {}),
      ...(v.slurm ? { shards: v.slurm.shards.map(({ failures: _, ...s }) => s) } : {}),
      lastFailures: v.failures.map((f) => ({ id: f.id, status: f.status, error: f.error, attempts: f.attempts })),
    });
    return EXIT.ok;
  }
  for (const line of statusLines(job, v, plainStyle)) console.log(line);
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
  // A submitted job's items run on the nodes: what finished is in its shards' result files.
  if (job.slurm && values.all)
    process.stderr.write(
      `batch export: job ${job.id} runs on Slurm: only its finished items are here (each shard's records are on its node)\n`,
    );
  const lines = job.slurm ? submittedLines(job) : finishedLines(store.batches, job.id, !!values.all);
  let chunk = values.csv ? `${csvLine(CSV_COLUMNS)}\n` : "";
  for (const line of lines) {
    chunk += values.csv ? `${csvLine(csvRow(line))}\n` : `${JSON.stringify(line)}\n`;
    if (chunk.length > 1 << 16) {
      process.stdout.write(chunk);
      chunk = "";
    }
  }
  process.stdout.write(chunk);
  return EXIT.ok;
}
