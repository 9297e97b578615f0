// A call whose tasks come one by one from a source instead of a list (a batch job's items: core/batch/): the same
// runner as every call (runner.ts) — the caps admit each task, each is recorded queued before it starts, its owner
// lists it, the scheduler runs it with the call's rate gate, spend and kept children, and its events go to the
// front — but nothing is kept per task once it ended, so ten thousand tasks cost what the running ones cost.
import type { CapSettings } from "../cap-settings.ts";
import type { Engine } from "../run/engine.ts";
import { runStreamed } from "../run/scheduler.ts";
import { settleHooks } from "../run/task-hooks.ts";
import type { ResolvedTask } from "../run/task-types.ts";
import type { Refusal } from "./request.ts";
import { CallTrace } from "./call-trace.ts";
import { callTaskRunner, type CallEvent, type CallOptions, queueTask, schedulerEvents } from "./runner.ts";

export type StreamOptions = CallOptions & {
  concurrency: number;
  /** The dollar budget of all the source's tasks (running ones wrap up when it is spent). */
  maxCost?: number;
  /** What counts against maxCost already (a resumed job's earlier spend). */
  spentBefore?: number;
  /** The caps the tasks are admitted under (default: the engine's settings). */
  capSettings?: CapSettings;
  /** A task the caps refused: it is not started, and the source is asked for no more. */
  onRefusal?: (refusal: Refusal) => void;
};

/**
 * Runs what `next` hands out until it returns null (or the caps refuse one): each task admitted by the caps,
 * recorded queued, listed by the owner while it runs. Resolves once every task ended and their hooks did. A store
 * that cannot record a task ends the stream: that error rejects.
 */
export async function runStream(
  engine: Engine,
  next: () => Promise<ResolvedTask | null>,
  o: StreamOptions,
): Promise<void> {
  const running = new Map<number, ResolvedTask>();
  // Traced: one trace for the whole source, each task's spans leaving as it ends (nothing kept per ended task).
  const trace = engine.tracing ? new CallTrace(engine.tracing, (index) => running.get(index), o.trace) : undefined;
  const emit = (e: CallEvent) => {
    trace?.event(e);
    o.onEvent?.(e);
  };
  const caps = o.capSettings ?? engine.settings;
  /** Queued run ids and the tasks of those under way, by session id and index: only the running ones. */
  const queued = new Map<string, number>();
  let refused = false;
  let failure: unknown;
  const admitted = async (): Promise<ResolvedTask | null> => {
    if (refused || failure !== undefined) return null;
    const task = await next();
    if (!task) return null;
    const refusal = o.caps.admit(caps, { tasks: 1 });
    if (refusal) {
      refused = true;
      o.onRefusal?.(refusal);
      return null;
    }
    try {
      queued.set(task.sessionId, queueTask(engine, task));
    } catch (err) {
      o.caps.withdraw({ tasks: 1 });
      failure = err;
      return null;
    }
    // Not adopted before it starts (as a listed call's queued tasks are): it starts at once, and the owner lists it
    // then (wrap) — its record is rewritten once less per task, a third of the owner's file work in a long stream.
    return task;
  };
  const events = schedulerEvents((index) => running.get(index)!, emit);
  const run = callTaskRunner(engine, o, { queued: (task) => queued.get(task.sessionId)! }, emit, trace);
  try {
    await runStreamed(
      admitted,
      o.concurrency,
      async (task, wiring, index) => {
        try {
          return await run(task, wiring, index);
        } finally {
          queued.delete(task.sessionId);
          o.owner?.release([task.sessionId]);
        }
      },
      {
        rateLimitWaitSec: engine.settings.rateLimitWait,
        maxCost: o.maxCost,
        spentBefore: o.spentBefore,
        signal: o.signal,
        onTaken: (index, task) => running.set(index, task),
        ...events,
        onTaskEnd: (index, outcome) => {
          events.onTaskEnd(index, outcome);
          running.delete(index);
        },
      },
    );
  } catch (err) {
    failure ??= err;
    throw err;
  } finally {
    trace?.end(failure);
  }
  await settleHooks(engine);
  await engine.tracing?.flush();
  if (failure !== undefined) throw failure;
}
