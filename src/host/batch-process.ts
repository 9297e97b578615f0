// A batch job started in the background (`batch --background`, the pi and MCP batch tool): `subagents batch …` in a
// detached process of its own, its output in a log beside the database, so the job outlives whoever started it.
// Its start is known by its record: the job's owner is that process (store/batch-records.ts).
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { BatchRecords } from "../core/store/batch-records.ts";

export type BatchStart = { pid: number; log: string };

/** Starts `command batch ARGS` detached (cwd, env as given); its stdout and stderr go to the job's log. */
export function startBatchProcess(
  command: string[],
  args: string[],
  o: { cwd: string; env: Record<string, string | undefined>; dataDir: string; job: string },
): BatchStart {
  const dir = path.join(o.dataDir, "batch-logs");
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const log = path.join(dir, `${o.job}.log`);
  const out = fs.openSync(log, "a", 0o600);
  try {
    // The batch is the CLI, whoever starts it (the pi role's and a child's own variables stay behind).
    const env = Object.fromEntries(
      Object.entries(o.env).filter(([k]) => k !== "SUBAGENTS_ROLE" && !k.startsWith("PI_SUBAGENT")),
    );
    const child = spawn(command[0], [...command.slice(1), "batch", ...args], {
      cwd: o.cwd,
      env,
      detached: true,
      stdio: ["ignore", out, out],
    });
    child.unref();
    if (!child.pid) throw new Error(`could not start ${command[0]}`);
    return { pid: child.pid, log };
  } finally {
    fs.closeSync(out);
  }
}

/** Waits until the process has taken the job (its run is recorded: null) or has ended first: then the end of its
 *  log says why. `passBefore`: the job's run count before the process started. */
export async function jobTaken(
  records: BatchRecords,
  job: string,
  start: BatchStart,
  passBefore: number,
  isAlive: (pid: number) => boolean,
  timeoutMs = 60_000,
): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  for (let wait = 20; Date.now() < deadline; wait = Math.min(wait * 2, 250)) {
    if ((records.job(job)?.pass ?? 0) > passBefore) return null;
    if (!isAlive(start.pid)) {
      if ((records.job(job)?.pass ?? 0) > passBefore) return null;
      return logTail(start.log) || `the batch process ${start.pid} ended before it recorded the job`;
    }
    await new Promise((r) => setTimeout(r, wait));
  }
  return `the batch process ${start.pid} did not record job ${job} within ${timeoutMs / 1000}s (see ${start.log})`;
}

function logTail(log: string): string {
  try {
    return fs.readFileSync(log, "utf8").trim().split("\n").slice(-3).join("\n");
  } catch {
    return "";
  }
}
