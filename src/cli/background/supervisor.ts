// Background runs (docs/cli.md "Background runs"): `delegate --background` validates, writes the tasks to a job file and starts this
// executable again in the supervisor role — its own session and process group, stdio to a log file under the
// data dir — then exits. The supervisor owns the children like a foreground CLI run would (control socket,
// kill protocol, recorded statuses) and exits when its last task ends. Its children watch its PID, so killing
// it stops them within about a second and their runs are then recorded as interrupted.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { runScheduled } from "../../core/run/scheduler.ts";
import { statusLine } from "../../core/run/outcome-text.ts";
import { effectiveTimeout, runTask } from "../../core/run/task.ts";
import { settleHooks } from "../../core/run/task-hooks.ts";
import type { CallTaskInput } from "../../core/call/request.ts";
import { startOwner } from "../../control/owner.ts";
import { waitingOf } from "../../control/running.ts";
import { questionText, type AskRequest } from "../../core/run/process/ask.ts";
import { controlDir, ownerFile, type OwnerRecord } from "../../control/registry.ts";
import { procStartTime } from "../../host/process-identity.ts";
import { selfCommand } from "../self-command.ts";
import { buildEngine, cliContext, dataDir } from "../engine.ts";
import { appendEnd, appendEvent, sessionLogPath } from "./session-log.ts";
import { trapSignals } from "../terminal/signals.ts";
import { ownerShutdown } from "../../core/run/process/abort-reason.ts";
import { CapGuard } from "../../core/run/cap-guard.ts";

export type Job = { cwd: string; concurrency?: number; inputs: CallTaskInput[]; log?: string; maxCost?: number };

/** Starts a detached supervisor for the job and registers it at once, so `wait ID` works before it is up. */
export function startSupervisor(data: string, job: Job): { pid: number; log: string } {
  const stamp = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  fs.mkdirSync(controlDir(data), { recursive: true, mode: 0o700 });
  fs.mkdirSync(path.join(data, "logs"), { recursive: true, mode: 0o700 });
  const jobFile = path.join(controlDir(data), `job-${stamp}.json`);
  const log = path.join(data, "logs", `supervisor-${stamp}.log`);
  fs.writeFileSync(jobFile, JSON.stringify({ ...job, log }), { mode: 0o600 });
  const out = fs.openSync(log, "a", 0o600);
  const [cmd, ...args] = selfCommand();
  const child = spawn(cmd, [...args, jobFile], {
    cwd: job.cwd,
    detached: true,
    stdio: ["ignore", out, out],
    env: { ...process.env, SUBAGENTS_ROLE: "supervisor" },
  });
  fs.closeSync(out);
  child.unref();
  const pid = child.pid;
  if (pid === undefined) throw new Error("cannot start the background supervisor");
  const record: OwnerRecord = {
    pid,
    startTime: procStartTime(pid),
    role: "supervisor",
    socket: "",
    sessions: job.inputs.map((t) => t.sessionId),
    log,
    startedAt: Date.now(),
  };
  try {
    // "wx": if the supervisor already registered itself (with its socket), its record stays.
    fs.writeFileSync(ownerFile(data, pid), JSON.stringify(record), { flag: "wx", mode: 0o600 });
  } catch {
    // registered already
  }
  return { pid, log };
}

export async function runSupervisor(argv: string[]): Promise<number> {
  // Our children (and anything they start) must not inherit the role.
  delete process.env.SUBAGENTS_ROLE;
  const jobFile = argv[0];
  let job: Job;
  try {
    job = JSON.parse(fs.readFileSync(jobFile, "utf8")) as Job;
    fs.rmSync(jobFile, { force: true });
  } catch (err) {
    console.error(`supervisor: cannot read job ${jobFile}: ${(err as Error).message}`);
    return 2;
  }
  const ctx = cliContext(job.cwd);
  const engine = buildEngine(ctx, job.cwd);
  const data = dataDir(ctx);
  const owner = await startOwner(
    data,
    "supervisor",
    job.inputs.map((t) => t.sessionId),
    { log: job.log, waiting: waitingOf(job.inputs) },
  );
  // A signal to a detached supervisor is the machine or the user's session going away, not a cancel (that goes
  // through `subagents cancel`): its tasks are recorded interrupted, as when pi shuts down.
  const interrupt = trapSignals({ reason: ownerShutdown() });
  const log = (line: string) => console.log(`${new Date().toISOString()} ${line}`);
  log(`supervisor ${process.pid}: ${job.inputs.length} task(s) in ${job.cwd}`);
  const logs = job.inputs.map((t) => sessionLogPath(data, t.sessionId));
  // The session caps hold per supervisor: its front checked them; here queued tasks stop at maxSessionCost.
  const caps = new CapGuard(undefined, "this background run");
  const limit = caps.admit(engine.settings, { tasks: job.inputs.length, maxCost: job.maxCost });
  if (limit) log(`supervisor: ${limit.message}`);
  try {
    // Nobody sits at a background run: its children's questions wait for `subagents answer` (up to askTimeout).
    const run = caps.runner(
      engine.settings,
      owner.wrap(
        (input, hooks) => runTask(engine, input, hooks),
        (t) => effectiveTimeout(engine, t),
      ),
    );
    const remoteAsk = {
      notify: (q: AskRequest) =>
        log(
          `? ${q.label} (session ${q.sessionId}) asks: ${questionText(q)} — answer with: subagents answer ${q.sessionId} "…"`,
        ),
    };
    await runScheduled(
      job.inputs,
      job.concurrency ?? engine.settings.concurrency,
      (input, hooks) => run(input, { ...hooks, remoteAsk }),
      {
        rateLimitWaitSec: engine.settings.rateLimitWait,
        maxMessages: engine.settings.maxMessages,
        maxCost: job.maxCost,
        signal: interrupt.signal,
        onTaskStart: (i) => log(`● ${job.inputs[i].name}: running (session: ${job.inputs[i].sessionId})`),
        onTaskEvent: (i, _state, ev) => appendEvent(logs[i], ev),
        onTaskEnd: (i, o) => {
          log(statusLine(o));
          appendEnd(logs[i], o);
        },
      },
    );
    await settleHooks(engine);
  } finally {
    owner.close();
    interrupt.dispose();
  }
  log("supervisor: all tasks ended");
  return 0;
}
