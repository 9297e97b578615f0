// The call runner: every front (the CLI's delegate, run and flow, the background supervisor, pi's tools) hands it a
// prepared call (prepare.ts) and renders what it reports. It does the rest, the same way for all: the caps admit
// the call, every task is recorded as queued (from then on each has a store row, whatever becomes of its owner),
// its owner lists its tasks, the scheduler runs them (at most `concurrency` at once, in `after` order, with the
// call's rate-limit gate, team, kept children and spend), each through the caps' start check and the owner
// (steer, cancel, watch from elsewhere), and the tasks' shell hooks are waited for at the end.
import type { CapSettings } from "../cap-settings.ts";
import type { CapGuard } from "../run/cap-guard.ts";
import type { Engine } from "../run/engine.ts";
import type { TaskEventPayload } from "../run/hooks/payload.ts";
import type { Asker, AskRequest } from "../run/process/ask.ts";
import type { RunState } from "../run/process/run-state.ts";
import { runScheduled } from "../run/scheduler.ts";
import { runTask } from "../run/task.ts";
import { failedResult } from "../run/task-error.ts";
import { runOwner, sessionOf } from "../run/session-file.ts";
import { settleHooks } from "../run/task-hooks.ts";
import type { ResolvedTask, TaskOutcome, TaskWiring } from "../run/task-types.ts";
import type { ChildEvent } from "../types.ts";
import { traceEnv } from "../trace/context.ts";
import { CallTrace, type CallTraceOptions } from "./call-trace.ts";
import type { PreparedCall } from "./prepare.ts";
import type { Refusal } from "./request.ts";

/** One task's run, as the owner wraps it. */
export type TaskRun = (task: ResolvedTask, wiring: TaskWiring) => Promise<TaskOutcome>;

/** Where a call's tasks can be reached from elsewhere (`steer`, `cancel`, `wait`, `attach`): control/owner.ts. */
export type CallOwner = {
  /** Lists tasks it will run (queued ones too), so they are found before they start. */
  adopt(tasks: readonly { sessionId: string; name: string; after?: string[] }[]): void;
  /** Forgets listed tasks that never started (the call ended first). */
  release(ids: string[]): void;
  /** Makes one task steerable, cancellable and watchable while it runs. */
  wrap(run: TaskRun): TaskRun;
};

/** What a running call reports, in order, to the front that started it (each names its task by index). */
export type CallEvent =
  /** The task is taken from the queue (its window turns running). */
  | { type: "taskStart"; index: number; task: ResolvedTask }
  /** What the task does differently from its agent file (model substituted, tools missing), once known. */
  | { type: "taskWarnings"; index: number; warnings: string[] }
  /** One event of its child, with the task's state after it. */
  | { type: "taskProgress"; index: number; state: RunState; event: ChildEvent }
  /** Its end, as recorded. */
  | { type: "taskEnd"; index: number; outcome: TaskOutcome }
  /** Its run was recorded as started, or its end was: the object its shell hooks get on stdin (payload.ts). */
  | { type: "recorded"; index: number; payload: TaskEventPayload }
  /** Its child asked a question that waits for an answer from elsewhere (`questionsWait`). */
  | { type: "question"; index: number; question: AskRequest };

export type CallOptions = {
  /** The caps the call runs under (a pi session's, this invocation's, a supervisor's): they admit the call, and
   *  no queued task starts once maxSessionCost is spent. */
  caps: CapGuard;
  /** Where the tasks can be steered, cancelled and watched from (none: only from here). */
  owner?: CallOwner;
  /** Stops the call: running children by the kill protocol, queued tasks recorded as not started. Its reason
   *  decides cancelled or interrupted (process/abort-reason.ts). */
  signal?: AbortSignal;
  /** Who answers a child's question here and now (a terminal, a dialog); none: "no one can answer now". */
  ask?: Asker;
  /** Questions also wait (up to subagents.askTimeout) for an answer from elsewhere (`subagents answer`, a steer),
   *  each reported as a "question" event: a run nobody sits at (background). */
  questionsWait?: boolean;
  /** A front's own stop for one task by id (pi's `/subagents kill ID`). */
  track?: (sessionId: string, signal: AbortSignal) => { signal: AbortSignal; done(): void };
  /** Every event of the call, in order. */
  onEvent?: (event: CallEvent) => void;
  /** Where the call's trace hangs (when this process traces: engine.tracing), if the front knows better than the
   *  process's TRACEPARENT: an MCP request's `_meta.traceparent`, the parent agent's tool call. */
  trace?: CallTraceOptions;
};

/** A call under way. */
export type RunningCall = {
  readonly tasks: readonly ResolvedTask[];
  /** Every task's outcome, in the call's order, once the last one ended. */
  readonly outcomes: Promise<TaskOutcome[]>;
  /** The outcomes once the tasks' shell hooks have ended too (each bounded by subagents.hooks.timeout): a front
   *  that exits waits for this. */
  readonly settled: Promise<TaskOutcome[]>;
};

/**
 * Starts a prepared call: refused (the caps) before anything starts, or under way with every task recorded as
 * queued. A store that cannot record them throws here, before a front says "started".
 */
export function startCall(engine: Engine, call: PreparedCall, o: CallOptions): { refusal: Refusal } | RunningCall {
  const admitted = { tasks: call.tasks.length, maxCost: call.maxCost };
  const refusal = o.caps.admit(engine.settings, admitted);
  if (refusal) return { refusal };
  let queued: number[];
  try {
    queued = recordQueued(engine, call);
  } catch (err) {
    o.caps.withdraw(admitted);
    throw err;
  }
  o.owner?.adopt(call.tasks);
  // Traced (the OTEL_* switches): spans are built here from the events every front gets, so every front has them.
  const trace = engine.tracing ? new CallTrace(engine.tracing, call.tasks, o.trace) : undefined;
  const outcomes = schedule(engine, call, queued, o, trace).finally(() =>
    o.owner?.release(call.tasks.map((t) => t.sessionId)),
  );
  outcomes.then(
    () => trace?.end(),
    (err) => trace?.end(err),
  );
  const settled = outcomes.then(async (done) => {
    await settleHooks(engine);
    // The spans leave before a front that exits does (at most 2 s however the exporter fares).
    await engine.tracing?.flush();
    return done;
  });
  // A front waits for one of the two (a background one perhaps for neither): the other's failure is not unhandled.
  outcomes.catch(() => {});
  settled.catch(() => {});
  return { tasks: call.tasks, outcomes, settled };
}

/** A prepared call from start to end: its outcomes once its hooks ended, or why it did not start. */
export async function runCall(
  engine: Engine,
  call: PreparedCall,
  o: CallOptions,
): Promise<{ refusal: Refusal } | { outcomes: TaskOutcome[] }> {
  const running = startCall(engine, call, o);
  return "refusal" in running ? running : { outcomes: await running.settled };
}

/** One task's record: a queued run (in its session, new or resumed) owned by this process. */
export const queueTask = (engine: Engine, t: ResolvedTask): number =>
  engine.store.queueRun(sessionOf(engine, t, t.agent), {
    prompt: t.prompt,
    ...runOwner(engine.host),
    name: t.name,
  });

/** Every task gets its record: a queued run (in its session, new or resumed) owned by this process. Should one
 *  fail (a read-only or full store), the ones already recorded end as not started, as far as the store lets. */
function recordQueued(engine: Engine, call: PreparedCall): number[] {
  const ids: number[] = [];
  try {
    for (const t of call.tasks) ids.push(queueTask(engine, t));
    return ids;
  } catch (err) {
    const why = failedResult(
      `not started: the call could not record its tasks (${(err as Error).message})`,
      "SUBAGENT_FAILED",
    );
    for (const id of ids) settleQueued(engine, id, why);
    throw err;
  }
}

/** A task that ended without starting its run (refused before it, or a runner that threw) ends its queued record. */
export function settleQueued(engine: Engine, runId: number, result: TaskOutcome["result"]): void {
  try {
    engine.store.finishQueued(runId, result);
  } catch {
    // the store is failing: the next store that opens says the task never started (recoverStale)
  }
}

function schedule(
  engine: Engine,
  call: PreparedCall,
  queued: number[],
  o: CallOptions,
  trace?: CallTrace,
): Promise<TaskOutcome[]> {
  const emit = (e: CallEvent) => {
    trace?.event(e);
    o.onEvent?.(e);
  };
  const { settings } = engine;
  return runScheduled(
    call.tasks,
    call.concurrency ?? settings.concurrency,
    callTaskRunner(
      engine,
      o,
      { refused: (index) => call.refused[index], queued: (_task, index) => queued[index] },
      emit,
      trace,
    ),
    {
      rateLimitWaitSec: settings.rateLimitWait,
      maxMessages: settings.maxMessages,
      maxCost: call.maxCost,
      signal: o.signal,
      ...schedulerEvents(call.tasks, emit),
    },
  );
}

/** The scheduler's hooks that report a call's events (the task of an index from `taskOf`). */
export function schedulerEvents(
  taskOf: { readonly [index: number]: ResolvedTask } | ((index: number) => ResolvedTask),
  emit: (e: CallEvent) => void,
) {
  const task = (index: number) => (typeof taskOf === "function" ? taskOf(index) : taskOf[index]);
  return {
    onTaskStart: (index: number) => emit({ type: "taskStart", index, task: task(index) }),
    onTaskWarnings: (index: number, warnings: string[]) => emit({ type: "taskWarnings", index, warnings }),
    onTaskEvent: (index: number, state: RunState, event: ChildEvent) =>
      emit({ type: "taskProgress", index, state, event }),
    onTaskEnd: (index: number, outcome: TaskOutcome) => emit({ type: "taskEnd", index, outcome }),
  };
}

/**
 * How the call runs each task the scheduler hands it: through the caps' start check and the owner (steer, cancel,
 * watch), with the front's own stop, its answers to questions and its events; a task that ended without starting
 * ends its queued record. `refused`: why the task's agent may not run here; `queued`: its queued run's id. With a
 * trace, each task hands its child its span's context and reports its stages and placement.
 */
export function callTaskRunner(
  engine: Engine,
  o: CallOptions & { capSettings?: CapSettings },
  of: { refused?: (index: number) => Refusal | undefined; queued: (task: ResolvedTask, index: number) => number },
  emit: (e: CallEvent) => void = (e) => o.onEvent?.(e),
  trace?: CallTrace,
): (
  task: ResolvedTask,
  wiring: Parameters<TaskRun>[1] & { signal: AbortSignal },
  index: number,
) => Promise<TaskOutcome> {
  const own: TaskRun = (task, wiring) => runTask(engine, task, wiring);
  const run = o.caps.runner(o.capSettings ?? engine.settings, o.owner ? o.owner.wrap(own) : own);
  return async (task, wiring, index) => {
    const tracked = o.track?.(task.sessionId, wiring.signal);
    const refused = of.refused?.(index);
    const queuedRun = of.queued(task, index);
    let outcome: TaskOutcome;
    try {
      outcome = await run(task, {
        ...wiring,
        queuedRun,
        ...(refused ? { notRun: refused } : {}),
        signal: tracked?.signal ?? wiring.signal,
        ask: o.ask,
        ...(o.questionsWait
          ? { remoteAsk: { notify: (question) => emit({ type: "question", index, question }) } }
          : {}),
        onTaskEvent: (payload) => emit({ type: "recorded", index, payload }),
        ...(trace
          ? {
              traceEnv: traceEnv(trace.childContext(index)),
              onStage: trace.stageTimer(index),
              onStart: (info) => {
                wiring.onStart?.(info);
                trace.placed(index, info.placement);
              },
            }
          : {}),
      });
    } catch (err) {
      // A task runner must not throw; if it does, the other tasks still finish and this one is recorded.
      const result = failedResult(`Sub-agent failed: ${(err as Error).message}`, "SUBAGENT_FAILED");
      outcome = { sessionId: task.sessionId, name: task.name, agent: task.agent, result };
    } finally {
      tracked?.done();
    }
    settleQueued(engine, queuedRun, outcome.result);
    return outcome;
  };
}
