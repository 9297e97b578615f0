// A batch job submitted to Slurm (`batch submit`), seen from where it was submitted: each shard writes its results
// beside --out (RESULTS.jsonl.I, one line per finished item; its records stay in RESULTS.jsonl.I.db, which is one
// node's to write and not read from here), and squeue says which array tasks are still queued or running.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import type { ShardProgress, SlurmState } from "../core/batch/job.ts";
import type { ItemLine } from "../core/batch/lines.ts";
import type { BatchJob } from "../core/store/batch-records.ts";

type Submitted = NonNullable<BatchJob["slurm"]>;

const LAST_FAILURES = 3;

/** The shards' result files, in shard order. */
export const shardFiles = (s: Submitted): string[] => Array.from({ length: s.shards }, (_, i) => `${s.out}.${i + 1}`);

/** Every finished item's line in a shard's file, in its order; a cut line (a killed writer's last) is passed over. */
export function* shardLines(file: string): Generator<ItemLine> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return; // not written yet
  }
  for (const raw of text.split("\n")) {
    if (!raw.trim()) continue;
    try {
      const line = JSON.parse(raw) as ItemLine;
      if (typeof line?.id === "string") yield line;
    } catch {
      // cut
    }
  }
}

/** How far each shard is, from its result file. */
export function shardProgress(s: Submitted): ShardProgress[] {
  return shardFiles(s).map((file, i) => {
    const p: ShardProgress = {
      index: i + 1,
      file,
      written: fs.existsSync(file),
      completed: 0,
      failed: 0,
      cost: 0,
      failures: [],
    };
    for (const line of shardLines(file)) {
      p.cost += line.cost ?? 0;
      if (line.status === "completed") p.completed++;
      else if (line.status === "failed") {
        p.failed++;
        p.failures = [...p.failures, { id: line.id, error: line.error ?? "failed", attempts: line.attempts }].slice(
          -LAST_FAILURES,
        );
      }
    }
    return p;
  });
}

/** What squeue says of the job's array tasks. */
export function slurmState(jobId: string): SlurmState {
  const q = spawnSync("squeue", ["-h", "-r", "-j", jobId, "-o", "%T"], { encoding: "utf8" });
  if (q.error) return "unknown";
  // squeue forgets a job some minutes after it ended, and then refuses its id: ended too.
  if (q.status !== 0) return "ended";
  const states = q.stdout.split("\n").filter(Boolean);
  if (!states.length) return "ended";
  const running = states.filter((s) => s === "RUNNING" || s === "COMPLETING").length;
  return { running, pending: states.length - running };
}

/** Where a submitted job stands, for status (undefined: the job was not submitted). */
export const submittedOf = (job: BatchJob): { state: SlurmState; shards: ShardProgress[] } | undefined =>
  job.slurm ? { state: slurmState(job.slurm.jobId), shards: shardProgress(job.slurm) } : undefined;

/** A submitted job's finished items so far: its shards' lines, shard after shard (each id falls in one shard). */
export function* submittedLines(job: BatchJob): Generator<ItemLine> {
  if (job.slurm) for (const file of shardFiles(job.slurm)) yield* shardLines(file);
}
