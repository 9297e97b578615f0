// Stage "record": every task that got a run record ends with a terminal status on it.
import type { RunResult } from "../types.ts";
import type { TaskOutcome } from "./task-types.ts";
import { taskOutcome, type TaskContext } from "./task-context.ts";
import { fireTaskEvent } from "./task-hooks.ts";
import { StoreError } from "../store/store-error.ts";

/** The task's end hooks and listeners, once its end is recorded. */
function told(task: TaskContext, result: RunResult): void {
  const { engine, wiring, profile, runId, id, agent, input } = task;
  fireTaskEvent(engine, wiring, profile, runId, { sessionId: id, name: input.name, agent, cwd: input.cwd }, result);
}

/**
 * The run's end, written in one transaction (all of it or nothing). When the store cannot take it (a full disk,
 * a database made read-only meanwhile), a short record says why in its place — a small write often fits where
 * the output and transcript did not — and the result carries the store's error for the front to show; the run is
 * never left "running" to be taken for interrupted while its owner lives.
 */
function writeEnd(task: TaskContext, result: RunResult): RunResult {
  const { store } = task.engine;
  try {
    store.finishRun(task.runId, result);
    if (result.sessionFile && result.sessionFile !== task.sessionFile)
      store.setSessionFile(task.id, result.sessionFile);
    return result;
  } catch (err) {
    if (!(err instanceof StoreError)) throw err;
    const note = `this run's result could not be recorded: ${err.message}`;
    try {
      store.failRun?.(task.runId, note, err.code);
    } catch {
      // not even that fits: the next command that opens the store records the run as interrupted
    }
    return {
      ...result,
      warnings: [...(result.warnings ?? []), note],
      recordError: { code: err.code, message: err.message },
    };
  }
}

/** What the owner did not take back from the task's layer (named by the harvest), and why it could not finish it,
 *  are said among its warnings. */
function withLeft(result: RunResult, iso: NonNullable<RunResult["isolation"]>): void {
  const said = [...(iso.left ?? []), ...(iso.error && !result.isolation ? [`sandbox: ${iso.error}`] : [])];
  const add = said.filter((w) => !result.warnings?.includes(w));
  if (add.length) result.warnings = [...(result.warnings ?? []), ...add];
}

/** The task's end — its child's result, or the result of a stage that ended it before (or instead of) its child —
 *  recorded: its worktree's outcome (finished as after a run, whenever it got one: a failed setup leaves no
 *  worktree behind), the run's status, the child's session file if it moved; then told to its hooks. */
export async function recordEnd(task: TaskContext, ended: RunResult): Promise<TaskOutcome> {
  if (task.iso) withLeft(ended, (ended.isolation = await task.iso.finish()));
  if (task.inPlace) withLeft(ended, await task.inPlace.finish());
  const result = writeEnd(task, ended);
  told(task, result);
  return taskOutcome(task, result);
}
