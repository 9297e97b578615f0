// `batch submit ITEMS … --slurm N --out RESULTS.jsonl`: a Slurm array job of N tasks, each running this batch's
// shard I/N with its own records (RESULTS.jsonl.I.db) and results (RESULTS.jsonl.I) beside --out. The script is
// written beside --out (RESULTS.jsonl.sbatch) so it can be read and submitted again; submitting again resumes every
// shard. The job is recorded here with its Slurm job id (`batch status`, `batch merge --job`).
import * as fs from "node:fs";
import * as path from "node:path";
import { spawnSync } from "node:child_process";
import { EXIT, UsageError } from "../errors.ts";
import { parse, positiveNumber } from "../flags/args.ts";
import { BATCH_SUBMIT_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { BATCH_SUBMIT_HELP } from "../help.ts";
import { writeJson } from "../terminal/report.ts";
import { selfCommand } from "../self-command.ts";
import { cliContext, openStore } from "../engine.ts";
import { batchArgs, type BatchArgs } from "./run-batch.ts";
import { readItems } from "./items-file.ts";
import { countShards } from "../../core/batch/record-items.ts";
import { refusalError } from "../flags/call-flags.ts";

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The sbatch script: one array task per shard, each the same batch command on its shard. */
export function sbatchScript(args: BatchArgs, argv: string[], shards: number, command: string[]): string {
  const out = args.out!;
  const run = [
    ...command.map(quote),
    "batch",
    ...argv.map(quote),
    "--job",
    quote(args.job),
    "--shard",
    `"$SLURM_ARRAY_TASK_ID/${shards}"`,
    "--out",
    `${quote(out)}".$SLURM_ARRAY_TASK_ID"`,
    "--quiet",
  ];
  return [
    "#!/bin/sh",
    `#SBATCH --job-name=${`subagents-batch-${args.job}`.slice(0, 60)}`,
    `#SBATCH --array=1-${shards}`,
    `#SBATCH --output=${out}.%a.log`,
    `#SBATCH --chdir=${args.spec.defaults.cwd}`,
    "# Each shard keeps its own records beside its results: one writer per database, on any shared filesystem.",
    `export SUBAGENTS_DB=${quote(out)}".$SLURM_ARRAY_TASK_ID.db"`,
    `exec ${run.join(" ")}`,
    "",
  ].join("\n");
}

/** The batch command's own arguments, without what submit adds or decides per shard. */
function shardArgv(argv: string[]): string[] {
  const drop = new Set(["--slurm", "--partition", "--out", "--job", "--shard"]);
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const name = a.split("=")[0];
    if (name === "--json" || name === "--background") continue;
    if (drop.has(name)) {
      if (!a.includes("=")) i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

export async function batchSubmit(argv: string[]): Promise<number> {
  const { values, positionals } = parse("batch submit", argv, parseOptions(BATCH_SUBMIT_FLAGS));
  if (values.help) {
    console.log(BATCH_SUBMIT_HELP);
    return EXIT.ok;
  }
  const shards = positiveNumber("batch submit", "slurm", values.slurm);
  if (shards === undefined || !Number.isInteger(shards) || shards > 10_000)
    throw new UsageError("batch submit: --slurm N is required: the number of shards (array tasks), 1–10000.");
  if (!values.out)
    throw new UsageError("batch submit: --out RESULTS.jsonl is required (shard I writes RESULTS.jsonl.I).");
  const args = batchArgs("batch submit", values, positionals);
  // What every shard would refuse is refused here, before a node starts: a template naming a field the items lack,
  // an id given twice (across shards too), an empty file. And each shard's share, for status.
  const counted = await countShards(readItems(args.items), args.spec, shards, args.items);
  if ("refusal" in counted) throw refusalError("batch submit", counted.refusal);
  // Paths the nodes read: absolute, as the items file already is.
  const own = shardArgv(argv).map((a) => (a === positionals[0] ? args.items : a));
  const script = sbatchScript(args, own, shards, selfCommand());
  const file = `${args.out}.sbatch`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, script, { mode: 0o700 });
  const sbatch = spawnSync(
    "sbatch",
    ["--parsable", ...(values.partition ? ["--partition", values.partition] : []), file],
    { encoding: "utf8", cwd: args.spec.defaults.cwd },
  );
  if (sbatch.error)
    throw new UsageError(`batch submit: cannot run sbatch: ${sbatch.error.message} (is Slurm installed?)`);
  if (sbatch.status !== 0) throw new UsageError(`batch submit: sbatch refused the job: ${sbatch.stderr.trim()}`);
  const slurmJob = sbatch.stdout.trim().split(";")[0];
  const store = openStore(cliContext(args.spec.defaults.cwd));
  store.batches.submitted(
    args.job,
    args.items,
    { ...args.spec, out: args.out },
    { jobId: slurmJob, shards, out: args.out!, items: counted.perShard },
  );
  if (values.json) writeJson({ type: "submitted", job: args.job, slurmJob, shards, out: args.out, script: file });
  else {
    console.log(args.job);
    process.stderr.write(
      `batch ${args.job}: Slurm job ${slurmJob}, ${shards} shards → ${args.out}.1 … ${args.out}.${shards} (script ${file}). Gather: subagents batch merge --job ${args.job} --out MERGED.jsonl --wait\n`,
    );
  }
  return EXIT.ok;
}
