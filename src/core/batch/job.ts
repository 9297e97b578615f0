// What a batch job is (docs/batch.md): one prompt template over the items of a file, each item one sub-agent task.
// Pure: the job's id, an item's key (what its result depends on), which shard an item falls in, and how one
// attempt's end counts (done, to retry, failed).
import type { CallDefaults } from "../call/request.ts";
import type { ItemEnd } from "../store/batch-records.ts";
import type { TaskOutcome } from "../run/task-types.ts";

/** What a job runs, as recorded with it (JSON): the same command run again must say the same to resume it. */
export type JobSpec = {
  template: string;
  /** The column that names an item (default `id`; an item without it is named by its line). */
  idColumn: string;
  /** The task options every item runs with (the CLI's flags). */
  defaults: CallDefaults;
  outputSchema?: Record<string, unknown>;
  concurrency: number;
  maxAttempts: number;
  /** The job's dollar budget, its earlier runs' spend included. */
  maxCost?: number;
  /** `--shard I/N`: only the items whose id hashes to shard I (1-based). */
  shard?: Shard;
};

export type Shard = { index: number; count: number };

/** How far a shard of a submitted job is, from its result file (`out`.I, one line per finished item). */
export type ShardProgress = {
  index: number;
  file: string;
  /** The file exists: the shard has started. */
  written: boolean;
  completed: number;
  failed: number;
  cost: number;
  /** Its last failures, newest last. */
  failures: { id: string; error: string; attempts: number }[];
};

/** Where a submitted Slurm job stands: its array tasks still queued or running, or none left ("ended"); "unknown"
 *  where squeue cannot be asked (not on a Slurm host). */
export type SlurmState = { pending: number; running: number } | "ended" | "unknown";

export const DEFAULT_MAX_ATTEMPTS = 3;

/** Failures worth another attempt: the provider failed or limited, the child timed out, crashed or its runner did. */
export const RETRYABLE_CODES = ["SUBAGENT_FAILED", "SUBAGENT_TIMEOUT", "RATE_LIMITED", "RUNNER_FAILED"] as const;

/** FNV-1a, 32 bits: stable on every machine (shards, job ids); not a defence against anyone. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Whether an item falls in this shard (an id always falls in the same one, whatever the file's order). */
export const inShard = (id: string, shard: Shard | undefined) =>
  !shard || (fnv1a(id) % shard.count) + 1 === shard.index;

/** `I/N` with 1 ≤ I ≤ N, or why not. */
export function parseShard(text: string): Shard | string {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : Number.NaN;
  const count = m ? Number(m[2]) : Number.NaN;
  if (!m || count < 1 || index < 1 || index > count)
    return `--shard takes I/N with 1 ≤ I ≤ N, e.g. 1/4 (got "${text}")`;
  return { index, count };
}

export const JOB_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/;

/** A job's id when none is given: the items file's name and a hash of its path and the prompt's source (a prompt
 *  file's path, or the template itself), and the shard. The same command gives the same id. */
export function deriveJobId(itemsPath: string, promptSource: string, shard?: Shard): string {
  const base = (itemsPath.split("/").pop() ?? "items").replace(/\.[^.]*$/, "").replace(/[^A-Za-z0-9._-]+/g, "-");
  const hash = fnv1a(`${itemsPath}\0${promptSource}`).toString(16).padStart(8, "0");
  const name = `${(base.replace(/^[^A-Za-z0-9]+/, "") || "items").slice(0, 48)}-${hash}`;
  return shard ? shardJobId(name, shard) : name;
}

/** A shard's own job (its own records) under a job's name. */
export const shardJobId = (job: string, shard: Shard) => `${job}.${shard.index}of${shard.count}`;

/** What an item's result depends on: its prompt, its agent, the model asked for and the output schema. */
export async function itemKey(prompt: string, agent: string, model: string, schema: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify([prompt, agent, model, schema ?? null]));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * How an attempt's end counts. `stopping`: the job is being stopped (the item runs again next time, the attempt not
 * counted); `budgetSpent`: the job's budget is spent (an item it cut short also runs again next time). `uncount`
 * without `stopping`: money ran out, and no further item should start.
 */
export function attemptEnd(
  outcome: TaskOutcome,
  attempts: number,
  o: { maxAttempts: number; stopping: boolean; budgetSpent: boolean },
): { end: ItemEnd; uncount: boolean } {
  const r = outcome.result;
  const base = { usage: r.usage };
  if (r.status === "completed")
    return {
      end: {
        ...base,
        status: "completed",
        result: r.output,
        ...(r.structured !== undefined ? { data: r.structured } : {}),
      },
      uncount: false,
    };
  // Stopped, or not started because money ran out (the job's budget, the session's cap: no model turn was made):
  // the item runs when the job goes on. Not a failure of the item: no error is kept (status and the live view
  // list failures, and a stop's "Cancelled" would hide the real ones); the job's end says why it stopped.
  const unspent = r.errorCode === "BUDGET_EXCEEDED" && (o.budgetSpent || r.usage.turns === 0);
  if (o.stopping || unspent) return { end: { ...base, status: "pending" }, uncount: true };
  const failure = { ...base, result: r.output || undefined, error: r.error ?? "failed", errorCode: r.errorCode };
  // A child that finalized with ERROR said it could not: another attempt would say the same.
  const worthRetry =
    (RETRYABLE_CODES as readonly string[]).includes(r.errorCode ?? "") && r.finalize?.status !== "ERROR";
  return { end: { ...failure, status: worthRetry && attempts < o.maxAttempts ? "pending" : "failed" }, uncount: false };
}
