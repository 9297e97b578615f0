// subagent_batch, for pi and MCP alike (docs/batch.md "From pi and MCP"): `start` runs `subagents batch …` in a
// detached process of its own (host/batch-process.ts) and answers with the job id once the job is recorded;
// `status` and `export` read the job's records, the same ones `subagents batch status|export` read. A model's batch
// is held to its session's caps: the items it would start count as spawns.
import * as fs from "node:fs";
import * as path from "node:path";
import { firstProblem, SCHEMAS } from "../core/call/schemas.ts";
import type { CapSettings } from "../core/cap-settings.ts";
import type { Refusal } from "../core/call/request.ts";
import { finishedLines } from "../core/batch/lines.ts";
import type { BatchRecords } from "../core/store/batch-records.ts";
import type { SessionStore } from "../core/store/store-types.ts";
import { jobTaken, startBatchProcess } from "../host/batch-process.ts";
import { submittedLines, submittedOf } from "../host/batch-shards.ts";
import { jobStatus, statusLines } from "../ui/batch-summary.ts";
import { plainStyle } from "../ui/windows.ts";

export type BatchParams = {
  action: "start" | "status" | "export";
  job?: string;
  items?: string;
  prompt?: string;
  agent?: string;
  concurrency?: number;
  maxAttempts?: number;
  maxCost?: number;
  out?: string;
};

export type BatchToolDeps = {
  store: SessionStore;
  dataDir: string;
  /** How to start this program (the executable); none: batches cannot start from here. */
  command?: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** The caller's caps: a start asking for more children than they allow is refused. */
  caps?: { check(caps: CapSettings, call: { tasks: number; maxCost?: number }): Refusal | null; settings: CapSettings };
};

export type BatchToolResult = { text: string; details: Record<string, unknown>; isError?: boolean };

/** Lines of results an export returns at most (the rest: `subagents batch export JOB`). */
const EXPORT_LINES = 50;
const EXPORT_CHARS = 32 * 1024;

const fail = (text: string): BatchToolResult => ({ text, details: { error: text }, isError: true });

function recordsOf(store: SessionStore): BatchRecords | null {
  return (store as { batches?: BatchRecords }).batches ?? null;
}

export async function batchTool(raw: unknown, d: BatchToolDeps): Promise<BatchToolResult> {
  const problem = firstProblem(SCHEMAS.batch, raw);
  if (problem) return fail(`Invalid parameters: ${problem}`);
  const p = raw as BatchParams;
  const records = recordsOf(d.store);
  if (!records) return fail("Batch jobs need the session database (SQLite); this process keeps sessions in memory.");
  if (p.action === "start") return start(p, records, d);
  const job = p.job ? records.job(p.job) : records.jobs(1)[0];
  if (!job) return fail(p.job ? `No batch job "${p.job}".` : "No batch job recorded yet.");
  if (p.action === "status") {
    const v = jobStatus(records, job, Date.now(), submittedOf(job));
    const failures = v.failures.map((f) => ({ id: f.id, error: f.error, attempts: f.attempts }));
    return {
      text: statusLines(job, v, plainStyle).join("\n"),
      details: { job: job.id, status: v.status, counts: v.counts, rate: v.rate, failures },
    };
  }
  const lines: string[] = [];
  let chars = 0;
  let more = 0;
  for (const item of job.slurm ? submittedLines(job) : finishedLines(records, job.id)) {
    const line = JSON.stringify(item);
    if (lines.length < EXPORT_LINES && chars + line.length <= EXPORT_CHARS) {
      lines.push(line);
      chars += line.length + 1;
    } else more++;
  }
  const tail = more ? [`… ${more} more finished items: subagents batch export ${job.id}`] : [];
  return { text: [...lines, ...tail].join("\n") || "No item has finished yet.", details: { job: job.id, more } };
}

async function start(p: BatchParams, records: BatchRecords, d: BatchToolDeps): Promise<BatchToolResult> {
  if (!p.items || !p.prompt) return fail("start needs items (a .jsonl or .csv file) and prompt (the template).");
  if (!d.command) return fail("No subagents executable is at hand to run the batch (see 'subagents install').");
  const items = path.resolve(d.cwd, p.items);
  let count: number;
  try {
    count = countItems(items);
  } catch (err) {
    return fail(`Cannot read items ${items}: ${(err as Error).message}`);
  }
  const refusal = d.caps?.check(d.caps.settings, { tasks: count, maxCost: p.maxCost });
  if (refusal) return fail(`${refusal.code}: ${refusal.message}`);
  const args = [
    items,
    "--prompt",
    p.prompt,
    ...(p.job ? ["--job", p.job] : []),
    ...(p.agent ? ["--agent", p.agent] : []),
    ...(p.concurrency ? ["--concurrency", String(p.concurrency)] : []),
    ...(p.maxAttempts ? ["--max-attempts", String(p.maxAttempts)] : []),
    ...(p.maxCost !== undefined ? ["--max-cost", String(p.maxCost)] : []),
    ...(p.out ? ["--out", path.resolve(d.cwd, p.out)] : []),
    "--quiet",
  ];
  const name = p.job ?? `tool-${Date.now().toString(36)}`;
  const passBefore = records.job(name)?.pass ?? 0;
  const started = startBatchProcess(d.command, p.job ? args : [...args, "--job", name], {
    cwd: d.cwd,
    env: d.env,
    dataDir: d.dataDir,
    job: name,
  });
  const why = await jobTaken(records, name, started, passBefore, alive);
  if (why) return fail(`The batch did not start: ${why}`);
  return {
    text: `Batch ${name} started in the background (${count} items). Follow it with subagent_batch {"action":"status","job":"${name}"}; results: {"action":"export","job":"${name}"}.`,
    details: { job: name, items: count, pid: started.pid, log: started.log },
  };
}

/** Items in a file, for the caps: its non-blank lines (less the header row of a CSV). */
function countItems(file: string): number {
  const text = fs.readFileSync(file, "utf8");
  let n = 0;
  for (const line of text.split("\n")) if (line.trim()) n++;
  return /\.csv$/i.test(file) ? Math.max(0, n - 1) : n;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
