// Stage "record": every task that got a run record ends with a terminal status on it.
import type { RunResult } from "../types.ts";
import type { TaskOutcome } from "./task-types.ts";
import { ranResult, taskOutcome, type TaskContext } from "./task-context.ts";
import { fireTaskEvent } from "./task-hooks.ts";
import { endPayload } from "./hooks/payload.ts";

/** The task's end hooks and listeners, once its end is recorded. */
function told(task: TaskContext, result: RunResult): void {
  const { engine, wiring, profile, runId, id, agent, input } = task;
  fireTaskEvent(
    engine,
    wiring,
    profile,
    runId,
    endPayload({ sessionId: id, name: input.name, agent, cwd: input.cwd, schedule: engine.call.schedule }, result),
  );
}

/** The end of a task that ran: its worktree's outcome, the run's status, the child's session file if it moved. */
export async function recordTask(task: TaskContext): Promise<TaskOutcome> {
  const { store } = task.engine;
  const result = ranResult(task);
  if (task.iso) result.isolation = await task.iso.finish();
  store.finishRun(task.runId, result);
  if (result.sessionFile && result.sessionFile !== task.sessionFile) store.setSessionFile(task.id, result.sessionFile);
  told(task, result);
  return taskOutcome(task, result);
}

/** A stage ended the task before (or instead of) its child: that result is the run's end (its worktree, when it got
 *  one, finished as after a run: a failed setup leaves no worktree behind). */
export async function recordEnd(task: TaskContext, result: RunResult): Promise<TaskOutcome> {
  if (task.iso) result.isolation = await task.iso.finish();
  task.engine.store.finishRun(task.runId, result);
  told(task, result);
  return taskOutcome(task, result);
}
