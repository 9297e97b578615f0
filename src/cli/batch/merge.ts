// `batch merge FILE… --out MERGED.jsonl` (or `--job JOB`: a submitted job's shard files, `--wait` for its Slurm job
// first): one line per id, the better line winning (core/batch/lines.ts betterLine), in the order ids first appear.
import * as fs from "node:fs";
import * as readline from "node:readline";
import { betterLine, type ItemLine } from "../../core/batch/lines.ts";
import { EXIT, UsageError } from "../errors.ts";
import { parse } from "../flags/args.ts";
import { BATCH_MERGE_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { BATCH_MERGE_HELP } from "../help.ts";
import { findJob } from "./find-job.ts";
import { shardFiles, slurmState } from "../../host/batch-shards.ts";

export async function batchMerge(argv: string[]): Promise<number> {
  const { values, positionals } = parse("batch merge", argv, parseOptions(BATCH_MERGE_FLAGS));
  if (values.help) {
    console.log(BATCH_MERGE_HELP);
    return EXIT.ok;
  }
  if (!values.out) throw new UsageError("batch merge: --out FILE is required (where the merged lines go).");
  let files = positionals;
  let missingShards = 0;
  if (values.job) {
    if (positionals.length) throw new UsageError("batch merge: give FILE… or --job, not both.");
    const { job } = findJob("batch merge", values.job);
    if (!job.slurm) throw new UsageError(`batch merge: job ${job.id} was not submitted with 'batch submit'.`);
    if (values.wait) await slurmJobEnded(job.slurm.jobId);
    files = shardFiles(job.slurm);
    const absent = files.filter((f) => !fs.existsSync(f));
    for (const f of absent) process.stderr.write(`batch merge: ${f} is missing (that shard has not written results)\n`);
    missingShards = absent.length;
    files = files.filter((f) => fs.existsSync(f));
  } else if (!files.length) throw new UsageError("batch merge: name the result files, or --job JOB.");
  else if (values.wait) throw new UsageError("batch merge: --wait goes with --job.");

  const merged = new Map<string, ItemLine>();
  for (const file of files) {
    let n = 0;
    const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const text of lines) {
      n++;
      if (!text.trim()) continue;
      let line: ItemLine;
      try {
        line = JSON.parse(text);
      } catch {
        // The last line of a file whose writer was killed may be cut: said, and skipped.
        process.stderr.write(`batch merge: ${file} line ${n} is not JSON; skipped\n`);
        continue;
      }
      if (typeof line?.id !== "string") continue;
      const had = merged.get(line.id);
      merged.set(line.id, had ? betterLine(had, line) : line);
    }
  }
  const tmp = `${values.out}.${process.pid}.tmp`;
  const fd = fs.openSync(tmp, "w", 0o644);
  let completed = 0;
  try {
    let chunk = "";
    for (const line of merged.values()) {
      if (line.status === "completed") completed++;
      chunk += `${JSON.stringify(line)}\n`;
      if (chunk.length > 1 << 16) {
        fs.writeSync(fd, chunk);
        chunk = "";
      }
    }
    fs.writeSync(fd, chunk);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, values.out);
  process.stderr.write(
    `batch merge: ${merged.size} items from ${files.length} files → ${values.out} (${completed} completed, ${merged.size - completed} not)\n`,
  );
  return completed === merged.size && !missingShards ? EXIT.ok : EXIT.taskFailed;
}

/** Waits until Slurm no longer lists the job (every array task ended). */
async function slurmJobEnded(jobId: string): Promise<void> {
  for (;;) {
    const state = slurmState(jobId);
    if (state === "unknown")
      throw new UsageError("batch merge --wait: squeue cannot be run here (is Slurm installed?)");
    if (state === "ended") return;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
