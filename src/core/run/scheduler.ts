// Runs N tasks with at most `concurrency` children at once; results come back in input order.
// Every task gets its session id up front (so windows and summaries can show it before the child starts).
// An abort stops every running child through the signal each task gets; queued tasks still go through the
// runner with an aborted signal, which records them as cancelled without starting a child.
import type { RunState } from "./process/run-state.ts";
import { failedResult } from "./task-error.ts";
import type { ResolvedTask, TaskOutcome, TaskWiring } from "./task-types.ts";
import type { ChildEvent } from "../types.ts";
import { CallSpend } from "../budget.ts";
import { realClock } from "../host.ts";
import { DEFAULT_RATE_POLICY, rateGateFor, type RateGate } from "./process/rate-gate.ts";
import { DagQueue } from "./dag.ts";
import { ChildPool } from "./process/pool.ts";
import { callTeam } from "../team.ts";
import { confinedTask } from "./runners/where.ts";

/** Runs one task of the call (its index among the call's tasks) with what the scheduler wires into it: the call's
 *  signal, spend and rate gate, its team member and its ticket to the kept children (given when some task must
 *  wait: more tasks than run at once, or `after`), and `notRun` when a task it waits for did not complete. */
export type TaskRunner = (
  task: ResolvedTask,
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
  tasks: readonly ResolvedTask[],
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
  const pool = tasks.length > limit || tasks.some((t) => t.after?.length) ? new ChildPool(realClock, limit) : undefined;
  // Siblings message each other through the call's own hub: a message never reaches another call's task.
  // A confined task's messages reach only confined siblings (team.ts).
  const team = callTeam(
    tasks.map((t) => ({ ...t, confined: confinedTask(t) })),
    { maxMessages: hooks.maxMessages },
  );
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
      // An aborted call cancels what has not started; only a live call skips the dependents of a failed task.
      const skipped = controllers[i].signal.aborted ? undefined : pick.skipBecause;
      // A task's prompt gets the outputs of the tasks it waits for (`{{name}}`): a copy; the prepared task stays.
      const task = { ...tasks[i], prompt: queue.prompt(i) };
      const outcome = await startOne(
        task,
        i,
        controllers[i].signal,
        { callSpend, gate, pool, team, skipped },
        run,
        hooks,
      );
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

type Shared = {
  callSpend?: CallSpend;
  gate: RateGate;
  pool?: ChildPool;
  team?: ReturnType<typeof callTeam>;
  skipped?: string;
};

/** One task from the moment a worker takes it: the rate gate, its wiring, its run (which must not throw; if it does,
 *  the task is recorded failed and the others go on). */
async function startOne(
  task: ResolvedTask,
  i: number,
  signal: AbortSignal,
  s: Shared,
  run: TaskRunner,
  hooks: SchedulerHooks,
): Promise<TaskOutcome> {
  // Taken at once (before any wait): a worker that finds nothing left to start must not end the kept children
  // this task may still lease.
  const ticket = s.pool?.ticket();
  await s.gate.acquire(signal);
  if (!s.skipped) hooks.onTaskStart?.(i);
  if (!s.skipped && !signal.aborted) s.team?.start(i);
  try {
    return await run(
      task,
      {
        ...(s.skipped ? { notRun: { code: "SKIPPED" as const, message: s.skipped } } : {}),
        callSpend: s.callSpend,
        rateGate: s.gate,
        pool: ticket,
        team: s.team?.member(i),
        signal,
        onEvent: (state, ev) => hooks.onTaskEvent?.(i, state, ev),
        onStart: (info) => {
          if (info.warnings.length) hooks.onTaskWarnings?.(i, info.warnings);
        },
      },
      i,
    );
  } catch (err) {
    return {
      sessionId: task.sessionId,
      name: task.name,
      agent: task.agent,
      result: failedResult(`Sub-agent failed: ${(err as Error).message}`, "SUBAGENT_FAILED"),
    };
  } finally {
    s.gate.release();
    ticket?.done();
  }
}

/**
 * Runs tasks as a source hands them out (a batch job's items: core/call/stream.ts), at most `concurrency` at once,
 * with one rate gate, one spend and one set of kept children for all of them. Nothing is kept per task once it
 * ended: its outcome goes to onTaskEnd, numbered in the order the tasks were taken. `next` returns null when
 * nothing is left; it may wait (for a running task that could be retried) before it says so.
 */
export async function runStreamed(
  next: () => Promise<ResolvedTask | null>,
  concurrency: number,
  run: TaskRunner,
  hooks: SchedulerHooks & { spentBefore?: number; onTaken?: (index: number, task: ResolvedTask) => void },
): Promise<void> {
  const limit = Math.max(1, Math.floor(concurrency));
  const gate =
    hooks.rateGate ?? rateGateFor(limit, realClock, hooks.rateLimitWaitSec ?? DEFAULT_RATE_POLICY.maxWaitMs / 1000);
  const callSpend = hooks.maxCost !== undefined ? new CallSpend(hooks.maxCost, hooks.spentBefore) : undefined;
  const pool = new ChildPool(realClock, limit);
  let taken = 0;
  const worker = async () => {
    for (let task = await next(); task; task = await next()) {
      const i = taken++;
      hooks.onTaken?.(i, task);
      const controller = new AbortController();
      const abort = () => controller.abort(hooks.signal?.reason);
      if (hooks.signal?.aborted) abort();
      else hooks.signal?.addEventListener("abort", abort, { once: true });
      const outcome = await startOne(task, i, controller.signal, { callSpend, gate, pool }, run, hooks);
      hooks.signal?.removeEventListener("abort", abort);
      callSpend?.settle(task.sessionId);
      hooks.onTaskEnd?.(i, outcome);
    }
    pool.drain();
  };
  await Promise.all(Array.from({ length: limit }, worker));
  await pool.close();
}
