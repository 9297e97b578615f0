// Background runs (docs/cli.md "Background runs"): `delegate --background` prepares the call, writes it to a job file
// and starts this executable again in the supervisor role — its own session and process group, stdio to a log file
// under the data dir. The supervisor runs the call with the call runner like a foreground CLI run would (control
// socket, caps, kill protocol, recorded statuses), tells the front on its ready pipe whether the call started (or
// why not), and exits when its last task ends. Its children watch its PID, so killing it stops them within about
// a second and their runs are then recorded as interrupted.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { PreparedCall } from "../../core/call/prepare.ts";
import { startCall, type CallEvent } from "../../core/call/runner.ts";
import type { Refusal } from "../../core/call/request.ts";
import { CapGuard } from "../../core/run/cap-guard.ts";
import { statusLines } from "../../core/run/outcome-text.ts";
import { ownerShutdown } from "../../core/run/process/abort-reason.ts";
import { questionText } from "../../core/run/process/ask.ts";
import { startOwner, type Owner } from "../../control/owner.ts";
import { controlDir } from "../../control/registry.ts";
import { buildEngine, cliContext, dataDir } from "../engine.ts";
import { selfCommand } from "../self-command.ts";
import { trapSignals, type Interrupt } from "../terminal/signals.ts";
import { appendEnd, appendEvent, sessionLogPath } from "./session-log.ts";

export type Job = { cwd: string; call: PreparedCall; log?: string };

/** What the supervisor says on its ready pipe, once: the call started, was refused, or could not start. */
export type ReadyWord = { started: true } | { refusal: Refusal } | { error: string };

/** The descriptor of the ready pipe in the supervisor (after stdin, stdout and stderr). */
const READY_FD = 3;
/** How long a front waits for its supervisor's word: its start-up (the engine, the store) on a busy machine. */
const READY_TIMEOUT_MS = 60_000;

/** Starts a detached supervisor for the job and waits for its word: started (its tasks are recorded and listed by
 *  its owner record), refused, or why it could not start. */
export async function startSupervisor(data: string, job: Job): Promise<{ pid: number; log: string; word: ReadyWord }> {
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
    stdio: ["ignore", out, out, "pipe"],
    env: { ...process.env, SUBAGENTS_ROLE: "supervisor" },
  });
  fs.closeSync(out);
  const pid = child.pid;
  if (pid === undefined) {
    fs.rmSync(jobFile, { force: true });
    throw new Error("cannot start the background supervisor");
  }
  const word = await readWord(child.stdio[READY_FD] as NodeJS.ReadableStream, () => logTail(log));
  if ("error" in word && word.error.startsWith("no word")) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  fs.rmSync(jobFile, { force: true });
  child.unref();
  return { pid, log, word };
}

/** The supervisor's one line, or what its log says when it ended (or hung) without one. */
function readWord(stream: NodeJS.ReadableStream, tail: () => string): Promise<ReadyWord> {
  return new Promise((resolve) => {
    let buf = "";
    const done = (w: ReadyWord) => {
      clearTimeout(timer);
      stream.removeAllListeners();
      (stream as { destroy?: () => void }).destroy?.();
      resolve(w);
    };
    const timer = setTimeout(
      () => done({ error: `no word from the supervisor within ${READY_TIMEOUT_MS / 1000} s; stopped it. ${tail()}` }),
      READY_TIMEOUT_MS,
    );
    stream.setEncoding?.("utf8");
    stream.on("data", (c: string) => {
      buf += c;
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      try {
        done(JSON.parse(buf.slice(0, nl)) as ReadyWord);
      } catch {
        done({ error: `a garbled word from the supervisor. ${tail()}` });
      }
    });
    stream.on("error", () => done({ error: `the supervisor ended before it started the tasks. ${tail()}` }));
    stream.on("end", () => done({ error: `the supervisor ended before it started the tasks. ${tail()}` }));
  });
}

/** The last lines of a supervisor's log, for a start that failed. */
function logTail(log: string): string {
  try {
    const lines = fs.readFileSync(log, "utf8").trim().split("\n").slice(-3).join(" / ");
    return lines ? `Its log (${log}): ${lines}` : `Its log: ${log}`;
  } catch {
    return `Its log: ${log}`;
  }
}

/** The ready pipe, said once then closed (our children must not inherit it). */
function readyPipe(): (w: ReadyWord) => void {
  let open = true;
  return (w) => {
    if (!open) return;
    open = false;
    try {
      fs.writeSync(READY_FD, `${JSON.stringify(w)}\n`);
      fs.closeSync(READY_FD);
    } catch {
      // the front is gone (it timed out): the log says the rest
    }
  };
}

export async function runSupervisor(argv: string[]): Promise<number> {
  // Our children (and anything they start) must not inherit the role.
  delete process.env.SUBAGENTS_ROLE;
  const say = readyPipe();
  const log = (line: string) => console.log(`${new Date().toISOString()} ${line}`);
  let owner: Owner | undefined;
  let interrupt: Interrupt | undefined;
  try {
    const job = JSON.parse(fs.readFileSync(argv[0], "utf8")) as Job;
    const ctx = cliContext(job.cwd);
    const engine = buildEngine(ctx, job.cwd);
    const data = dataDir(ctx);
    owner = await startOwner(data, "supervisor", [], { log: job.log });
    // A signal to a detached supervisor is the machine or the user's session going away, not a cancel (that goes
    // through `subagents cancel`): its tasks are recorded interrupted, as when pi shuts down.
    interrupt = trapSignals({ reason: ownerShutdown() });
    log(`supervisor ${process.pid}: ${job.call.tasks.length} task(s) in ${job.cwd}`);
    const running = startCall(engine, job.call, {
      // The session caps hold per supervisor: a call past them is refused here like anywhere else.
      caps: new CapGuard(undefined, "this background run"),
      owner,
      signal: interrupt.signal,
      // Nobody sits at a background run: its children's questions wait for `subagents answer` (up to askTimeout).
      questionsWait: true,
      onEvent: logEvent(job.call, data, log),
    });
    if ("refusal" in running) {
      log(`supervisor: refused: ${running.refusal.message}`);
      say(running);
      return 2;
    }
    say({ started: true });
    await running.settled;
    log("supervisor: all tasks ended");
    return 0;
  } catch (err) {
    log(`supervisor: ${(err as Error).message}`);
    say({ error: (err as Error).message });
    return 2;
  } finally {
    owner?.close();
    interrupt?.dispose();
  }
}

/** The supervisor's log and each session's readable log (`subagents logs ID`). */
function logEvent(call: PreparedCall, data: string, log: (line: string) => void): (e: CallEvent) => void {
  const logs = call.tasks.map((t) => sessionLogPath(data, t.sessionId));
  return (e) => {
    if (e.type === "taskStart") log(`● ${e.task.name}: running (session: ${e.task.sessionId})`);
    else if (e.type === "taskProgress") appendEvent(logs[e.index], e.event);
    else if (e.type === "taskEnd") {
      log(statusLines(e.outcome));
      appendEnd(logs[e.index], e.outcome);
    } else if (e.type === "question") {
      const q = e.question;
      log(
        `? ${q.label} (session ${q.sessionId}) asks: ${questionText(q)} — answer with: subagents answer ${q.sessionId} "…"`,
      );
    }
  };
}
