// The one place the MCP front touches the call path: a request prepared by the call module (every check, in one
// order, for every front), then its tasks run under this server's owner (so `subagents sessions`, `attach`,
// `steer` and `cancel` reach them), its caps and the scheduler, with the tasks' hooks settled at the end. Kept in
// one small file so that moving to a call runner in core/call changes this file and nothing else of the front.
import type { Owner } from "../control/owner.ts";
import type { CallFront } from "../core/call/prepare.ts";
import { prepareCall, type Prepared } from "../core/call/prepare.ts";
import type { CallRequest, CallTaskInput } from "../core/call/request.ts";
import type { CapGuard } from "../core/run/cap-guard.ts";
import type { Asker } from "../core/run/process/ask.ts";
import { runScheduled } from "../core/run/scheduler.ts";
import { settleHooks } from "../core/run/task-hooks.ts";
import { effectiveTimeout, runTask, type Engine, type TaskOutcome } from "../core/run/task.ts";
import { callWindows, type CallWindows } from "../ui/call-windows.ts";

export type CallRun = {
  inputs: CallTaskInput[];
  windows: CallWindows;
  /** The task whose window changed last (what a progress message names). */
  lastActive: number;
  /** Every outcome, once every task ended and its hooks settled. */
  outcomes: Promise<TaskOutcome[]>;
  /** Told of every change: a task started, reported an event, ended. */
  listeners: Set<() => void>;
  /** Stops the call's children with the kill protocol; `reason` decides how their ends are recorded. */
  abort(reason?: unknown): void;
};

export type RunOptions = {
  maxCost?: number;
  /** Who answers the children's questions (the MCP client through elicitation); none: the `ask` setting's answer. */
  ask?: Asker;
  /** A background call's questions wait for an answer from elsewhere (`subagents answer`, a steer). */
  waitForAnswers?: boolean;
};

/** The call's TaskInputs, checked and admitted under the caps, or why it does not start. */
export function prepare(engine: Engine, request: CallRequest, front: CallFront): Promise<Prepared> {
  return prepareCall(engine, request, front);
}

/** Starts a prepared call; nothing it starts outlives `abort` and the kill protocol. */
export function startRun(
  engine: Engine,
  owner: Owner,
  caps: CapGuard,
  inputs: CallTaskInput[],
  o: RunOptions,
): CallRun {
  const control = new AbortController();
  const windows = callWindows(engine, inputs);
  owner.adopt(inputs);
  const run = caps.runner(
    engine.settings,
    owner.wrap(
      (input, hooks) => runTask(engine, input, hooks),
      (input) => effectiveTimeout(engine, input),
    ),
  );
  const remoteAsk = o.waitForAnswers ? {} : undefined;
  const call: CallRun = {
    inputs,
    windows,
    lastActive: 0,
    listeners: new Set(),
    abort: (reason) => control.abort(reason),
    outcomes: Promise.resolve([]),
  };
  const changed = (i: number) => {
    call.lastActive = i;
    for (const fn of call.listeners) fn();
  };
  call.outcomes = runScheduled(
    inputs,
    engine.settings.concurrency,
    (input, hooks) => run(input, { ...hooks, ask: o.ask, remoteAsk }),
    {
      rateLimitWaitSec: engine.settings.rateLimitWait,
      maxMessages: engine.settings.maxMessages,
      signal: control.signal,
      maxCost: o.maxCost,
      onTaskStart: (i) => {
        windows.start(i, Date.now());
        changed(i);
      },
      onTaskWarnings: (i, warnings) => windows.warn(i, warnings),
      onTaskEvent: (i, state) => {
        windows.event(i, state);
        changed(i);
      },
      onTaskEnd: (i, outcome) => {
        windows.end(i, outcome, Date.now());
        changed(i);
      },
    },
  )
    .then(async (outcomes) => {
      await settleHooks(engine);
      return outcomes;
    })
    .finally(() => owner.release(inputs.map((t) => t.sessionId)));
  return call;
}
