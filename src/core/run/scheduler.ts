// Runs N tasks with at most `concurrency` children at once; results come back in input order.
// Every task gets its session id up front (so windows and summaries can show it before the child starts).
// An abort stops every running child through the signal each task gets; queued tasks still go through the
// runner with an aborted signal, which records them as cancelled without starting a child.
import type { RunState } from "./process/run-state.ts";
import { failedResult } from "./task-error.ts";
import type { PreparedTask, TaskOutcome, TaskWiring } from "./task-types.ts";
import type { ChildEvent } from "../types.ts";
import { CallSpend } from "../budget.ts";
import { realClock } from "../host.ts";
import { DEFAULT_RATE_POLICY, rateGateFor, type RateGate } from "./process/rate-gate.ts";
import { DagQueue } from "./dag.ts";
import { ChildPool } from "./process/pool.ts";
import { callTeam } from "../team.ts";

/** Runs one task of the call (its index among the call's tasks) with what the scheduler wires into it: the call's
 *  signal, spend and rate gate, its team member and its ticket to the kept children (given when some task must
 *  wait: more tasks than run at once, or `after`), and `notRun` when a task it waits for did not complete. */
export type TaskRunner = (
  task: PreparedTask,
  wiring: Pick<TaskWiring, "signal" | "onEvent" | "onStart" | "callSpend" | "rateGate" | "pool" | "team" | "notRun"> & {
    signal: AbortSignal;
  },
  index: number,
) => Promise<TaskOutcome>;

export type SchedulerHooks = {
  signal?: AbortSignal;
  onTaskStart?: (index: number) => void;
  /** The task's agent-file warnings, once its profile and model are resolved. */
  onTaskWarnings?: (index: number, warnings: string[]) => void;
  onTaskEvent?: (index: number, state: RunState, ev: ChildEvent) => void;
  onTaskEnd?: (index: number, outcome: TaskOutcome) => void;
  /** The whole call's dollar budget (budget.ts). */
  maxCost?: number;
  /** Given for tests; else one per call (rate-gate.ts), allowing this much waiting (settings.rateLimitWait). */
  rateGate?: RateGate;
  rateLimitWaitSec?: number;
  /** Messages the call's children may send each other in all (settings.maxMessages; core/team.ts). */
  maxMessages?: number;
};

export async function runScheduled(
  tasks: readonly PreparedTask[],
  concurrency: number,
  run: TaskRunner,
  hooks: SchedulerHooks = {},
): Promise<TaskOutcome[]> {
  const limit = Math.max(1, Math.floor(concurrency));
  const outcomes: TaskOutcome[] = new Array(tasks.length);
  const controllers = tasks.map(() => new AbortController());
  // The reason goes along: it decides whether tasks are recorded cancelled or interrupted (abort-reason.ts).
  const abortAll = () => {
    for (const c of controllers) c.abort(hooks.signal?.reason);
  };
  if (hooks.signal?.aborted) abortAll();
  else hooks.signal?.addEventListener("abort", abortAll, { once: true });

  // Rate limits lower how many children run at once (and hold new ones) for the whole call.
  const gate =
    hooks.rateGate ?? rateGateFor(limit, realClock, hooks.rateLimitWaitSec ?? DEFAULT_RATE_POLICY.maxWaitMs / 1000);
  const callSpend = hooks.maxCost !== undefined ? new CallSpend(hooks.maxCost) : undefined;
  // Tasks start in input order once their `after` tasks are done (dag.ts); without `after` that is plain order.
  const queue = new DagQueue(tasks);
  // A task that finds a child of the call idle with the same start runs in it instead of starting pi again: worth
  // having when some task must wait for another (more tasks than run at once, or `after`).
  const pool = tasks.length > limit || tasks.some((t) => t.after?.length) ? new ChildPool(realClock) : undefined;
  // Siblings message each other through the call's own hub: a message never reaches another call's task.
  const team = callTeam(tasks, { maxMessages: hooks.maxMessages });
  const finish = (i: number, outcome: TaskOutcome) => {
    // What the runner did not take into the task's record: messages held for a task that never started a child.
    const left = team?.end(i) ?? [];
    if (left.length)
      outcome = { ...outcome, result: { ...outcome.result, warnings: [...(outcome.result.warnings ?? []), ...left] } };
    outcomes[i] = outcome;
    queue.finish(i, outcome.result, outcome.sessionId);
    hooks.onTaskEnd?.(i, outcome);
  };
  const worker = async () => {
    for (let pick = queue.take(); pick !== "done"; pick = queue.take()) {
      if (pick === "wait") {
        await queue.wait();
        continue;
      }
      const i = pick.index;
      // Taken at once (before any wait): a worker that finds nothing left to start must not end the kept children
      // this task may still lease.
      const ticket = pool?.ticket();
      // An aborted call cancels what has not started; only a live call skips the dependents of a failed task.
      const skipped = controllers[i].signal.aborted ? undefined : pick.skipBecause;
      // A task's prompt gets the outputs of the tasks it waits for (`{{name}}`): a copy; the prepared task stays.
      const task = { ...tasks[i], prompt: queue.prompt(i) };
      await gate.acquire(controllers[i].signal);
      if (!skipped) hooks.onTaskStart?.(i);
      if (!skipped && !controllers[i].signal.aborted) team?.start(i);
      let outcome: TaskOutcome;
      try {
        outcome = await run(
          task,
          {
            ...(skipped ? { notRun: { code: "SKIPPED" as const, message: skipped } } : {}),
            callSpend,
            rateGate: gate,
            pool: ticket,
            team: team?.member(i),
            signal: controllers[i].signal,
            onEvent: (state, ev) => hooks.onTaskEvent?.(i, state, ev),
            onStart: (info) => {
              if (info.warnings.length) hooks.onTaskWarnings?.(i, info.warnings);
            },
          },
          i,
        );
      } catch (err) {
        // A task runner must not throw, but if it does the other tasks still finish and this one is recorded.
        outcome = {
          sessionId: task.sessionId,
          name: task.name,
          agent: task.profile ?? "default",
          result: failedResult(`Sub-agent failed: ${(err as Error).message}`, "SUBAGENT_FAILED"),
        };
      } finally {
        gate.release();
        ticket?.done();
      }
      finish(i, outcome);
    }
    // Nothing is left to start: kept children are not needed any more.
    pool?.drain();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  await pool?.close();
  hooks.signal?.removeEventListener("abort", abortAll);
  return outcomes;
}
