// `schedule run NAME`: one run of a schedule, now. From cron (--from-cron) or by hand, it runs the same way: in the
// folder the schedule was added from, with the environment it keeps (on top of only HOME, USER, LOGNAME and SHELL,
// which is what cron gives), its runs recorded under its name. One run at a time: a run due while the last is still
// going is skipped, and the skip is recorded like a run, so the morning's `subagents sessions` shows it.
import { DEFAULT_AGENT } from "../../core/run/task-types.ts";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { Database } from "bun:sqlite";
import type { ScheduleDefinition } from "../../core/schedule/definition.ts";
import { SCHEDULE_ENV } from "../../core/schedule/names.ts";
import { openStoreFile } from "../../host/open-store.ts";
import { ownerAlive } from "../../control/registry.ts";
import { procStartTime } from "../../host/process-identity.ts";
import { failedResult } from "../../core/run/task-error.ts";
import type { ErrorCode } from "../../core/types.ts";
import { bunDbOpener } from "../../host/sqlite-bun.ts";
import { storeFileOf } from "../../core/store/store-types.ts";
import { lockFile } from "./files.ts";
import { takeLock } from "./lock.ts";

/** What a scheduled run gets of the environment it is started from: what cron itself would give it. */
const BASE_ENV = ["HOME", "USER", "LOGNAME", "SHELL"];

export function scheduleDb(def: ScheduleDefinition, agentDir: string): string {
  return storeFileOf(def.env, def.env.PI_CODING_AGENT_DIR || agentDir);
}

/** The agent a schedule's command line runs, for the record of a run that never started. */
function agentOf(args: string[]): string {
  return args[0] === "run" && args[1] && !args[1].startsWith("-") ? args[1] : DEFAULT_AGENT;
}

/** A run of the schedule that did not start (skipped, its folder gone): recorded as any ended run is. */
export function recordNotRun(
  def: ScheduleDefinition,
  agentDir: string,
  message: string,
  code: ErrorCode,
): string | null {
  try {
    const file = scheduleDb(def, agentDir);
    const store = openStoreFile(bunDbOpener(Database), file, { isAlive: (o) => ownerAlive(path.dirname(file), o) });
    const id = store.newSessionId();
    // A run that never started, recorded the one way such a run is (queued, then ended unstarted).
    const run = store.queueRun(
      { id, name: def.name, agent: agentOf(def.args), cwd: def.cwd, schedule: def.name },
      {
        prompt: `subagents ${def.args.join(" ")}`,
        ownerPid: process.pid,
        ownerStart: procStartTime(process.pid),
        name: def.name,
      },
    );
    store.finishQueued(run, failedResult(message, code));
    return id;
  } catch (err) {
    process.stderr.write(`schedule ${def.name}: could not record it (${(err as Error).message})\n`);
    return null;
  }
}

export async function fireSchedule(def: ScheduleDefinition, agentDir: string, fromCron: boolean): Promise<number> {
  const say = (line: string) => process.stderr.write(`${fromCron ? `${new Date().toISOString()} ` : ""}${line}\n`);
  if (!fs.statSync(def.cwd, { throwIfNoEntry: false })?.isDirectory()) {
    const msg = `schedule ${def.name}: its folder ${def.cwd} does not exist any more; nothing ran`;
    say(msg);
    recordNotRun(def, agentDir, msg, "INVALID_INPUT");
    return 1;
  }
  fs.mkdirSync(path.dirname(lockFile(agentDir, def.name)), { recursive: true, mode: 0o700 });
  const lock = takeLock(lockFile(agentDir, def.name));
  if ("heldBy" in lock) {
    const since = lock.heldBy.startedAt ? new Date(lock.heldBy.startedAt).toISOString() : "an unknown time";
    const msg = `skipped: the previous run of schedule ${def.name} (pid ${lock.heldBy.pid}, started ${since}) is still going`;
    say(msg);
    const id = recordNotRun(def, agentDir, msg, "SKIPPED");
    if (id) say(`recorded as session ${id}`);
    // From cron a skip is the schedule working as meant; by hand it is worth a non-zero exit.
    return fromCron ? 0 : 1;
  }
  const env: Record<string, string> = {};
  for (const k of BASE_ENV) if (process.env[k]) env[k] = process.env[k]!;
  Object.assign(env, def.env, { [SCHEDULE_ENV]: def.name });
  say(`schedule ${def.name}: subagents ${def.args.join(" ")} (in ${def.cwd}, pid ${process.pid})`);
  try {
    const child = spawn(def.command[0], [...def.command.slice(1), ...def.args], {
      cwd: def.cwd,
      env,
      stdio: ["ignore", "inherit", "inherit"],
    });
    // A stop of this run (the machine going down, a kill by hand) reaches the command, which records its tasks' ends.
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const onTerm = forward("SIGTERM");
    const onInt = forward("SIGINT");
    process.on("SIGTERM", onTerm);
    process.on("SIGINT", onInt);
    const code = await new Promise<number>((resolve) => {
      child.on("error", (err) => {
        say(`schedule ${def.name}: cannot start ${def.command[0]}: ${err.message}`);
        resolve(127);
      });
      child.on("exit", (c, s) => resolve(c ?? (s === "SIGINT" ? 130 : 143)));
    });
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", onInt);
    if (code === 127)
      recordNotRun(
        def,
        agentDir,
        `schedule ${def.name}: cannot start ${def.command.join(" ")} (moved or removed? add the schedule again)`,
        "INVALID_INPUT",
      );
    say(`schedule ${def.name}: ended with exit code ${code}`);
    return code;
  } finally {
    lock.release();
  }
}
