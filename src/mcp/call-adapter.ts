// The MCP front on the call runner (core/call/runner.ts): a prepared call started under this server's owner (so
// `subagents sessions`, `attach`, `steer` and `cancel` reach its tasks) and caps, its events drawn into the windows
// a progress message reads. Everything else — recording the tasks as queued, the scheduler, the kill protocol,
// the tasks' hooks — is the runner's, as for every front.
import type { PreparedCall } from "../core/call/prepare.ts";
import type { Refusal } from "../core/call/request.ts";
import { startCall, type CallEvent, type CallOwner } from "../core/call/runner.ts";
import type { CapGuard } from "../core/run/cap-guard.ts";
import type { Engine } from "../core/run/engine.ts";
import type { Asker } from "../core/run/process/ask.ts";
import type { ResolvedTask, TaskOutcome } from "../core/run/task-types.ts";
import type { CallTraceOptions } from "../core/call/call-trace.ts";
import { callWindows, type CallWindows } from "../ui/call-windows.ts";

export type CallRun = {
  tasks: readonly ResolvedTask[];
  windows: CallWindows;
  /** When the call started (the progress line's elapsed time). */
  startedAt: number;
  /** The task whose window changed last (what a progress message names). */
  lastActive: number;
  /** Every outcome, once every task ended. */
  outcomes: Promise<TaskOutcome[]>;
  /** The outcomes once the tasks' hooks ended too: what the server waits for before it exits. */
  settled: Promise<TaskOutcome[]>;
  /** Told of every change: a task started, reported an event, ended. */
  listeners: Set<() => void>;
  /** Stops the call's children with the kill protocol; `reason` decides how their ends are recorded. */
  abort(reason?: unknown): void;
};

export type RunOptions = {
  caps: CapGuard;
  owner: CallOwner;
  /** Who answers the children's questions (the MCP client through elicitation); none: the `ask` setting's answer. */
  ask?: Asker;
  /** A background call's questions wait for an answer from elsewhere (`subagents answer`, a steer). */
  waitForAnswers?: boolean;
  /** Where the call's trace hangs: the client's `_meta.traceparent`, else this server's environment. */
  trace?: CallTraceOptions;
};

/** Starts a prepared call, or says why it did not start (the caps, a store that cannot record its tasks). */
export function startRun(engine: Engine, call: PreparedCall, o: RunOptions): CallRun | { refusal: Refusal } {
  const control = new AbortController();
  const windows = callWindows(engine, call.tasks);
  const listeners = new Set<() => void>();
  const run = { lastActive: 0, startedAt: Date.now() };
  const render = (e: CallEvent) => {
    if (!windows.apply(e, Date.now())) return;
    run.lastActive = e.index;
    for (const fn of listeners) fn();
  };
  let running: ReturnType<typeof startCall>;
  try {
    running = startCall(engine, call, {
      caps: o.caps,
      owner: o.owner,
      signal: control.signal,
      ask: o.ask,
      questionsWait: o.waitForAnswers,
      onEvent: render,
      trace: o.trace,
    });
  } catch (err) {
    return { refusal: { code: "SUBAGENT_FAILED", message: `Nothing was started: ${(err as Error).message}` } };
  }
  if ("refusal" in running) return running;
  return Object.assign(run, {
    tasks: running.tasks,
    windows,
    outcomes: running.outcomes,
    settled: running.settled,
    listeners,
    abort: (reason?: unknown) => control.abort(reason),
  });
}
