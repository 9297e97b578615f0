// One task end to end: resolve its session (new or resumed), build the child's prompt and command, record the
// run before the child starts, run it, and always record a terminal status. Shared by the CLI and pi fronts.
// The task's life is a list of stages (runTask below); what they share is in files of its own (engine.ts,
// task-types.ts, task-error.ts, task-context.ts), so no stage imports this file.
import { ranResult, type TaskStage } from "./task-context.ts";
import { prepareTask } from "./task-prepare.ts";
import { admitTask } from "./task-admit.ts";
import { loadSkills } from "./task-skills.ts";
import { loadMemory } from "./task-memory.ts";
import { isolateTask } from "./task-isolate.ts";
import { setupTask } from "./task-setup.ts";
import { runTaskChild } from "./task-child.ts";
import { acceptResult } from "./task-accept.ts";
import { recordEnd } from "./task-record.ts";
import { forkTask } from "./fork.ts";
import type { Engine } from "./engine.ts";
import type { ResolvedTask, TaskOutcome, TaskWiring } from "./task-types.ts";
import { failedResult } from "./task-error.ts";
import type { RunResult } from "../types.ts";
import { isDiskFull } from "../store/store-error.ts";

/** A task's life after prepare, in order (each stage in its own file: task-<stage>.ts), by name (a traced call's
 *  spans name them). */
const STAGES: [string, TaskStage][] = [
  ["admit", admitTask],
  ["skills", loadSkills],
  ["memory", loadMemory],
  ["isolate", isolateTask],
  ["setup", setupTask],
  ["fork", forkTask],
  ["child", runTaskChild],
  ["accept", acceptResult],
];

/**
 * One task end to end. prepare decides what the task is and records its run (or ends it before any run); then
 * each stage runs in turn, and a stage that returns a result ends the task there; record ends the run.
 */
export async function runTask(engine: Engine, input: ResolvedTask, wiring: TaskWiring): Promise<TaskOutcome> {
  const prepared = await prepareTask(engine, input, wiring);
  if ("outcome" in prepared) return prepared.outcome;
  const task = prepared.task;
  for (const [name, stage] of STAGES) {
    let ended: RunResult | void;
    const done = task.wiring.onStage?.(name);
    try {
      ended = await stage(task);
    } catch (err) {
      // A stage that throws (a file it could not write, say on a full disk) ends its task, recorded with why: the
      // call's other tasks go on, and no run stays "running".
      ended = failedResult(stageFailure(err), isDiskFull(err) ? "DISK_FULL" : "SUBAGENT_FAILED");
    } finally {
      done?.();
    }
    if (ended) return recordEnd(task, ended);
  }
  return recordEnd(task, ranResult(task));
}

/** One line for what a stage threw: a full disk says so and where (the error's own path), anything else its message. */
function stageFailure(err: unknown): string {
  const e = err as { message?: string; path?: string };
  const first = String(e?.message ?? err).split("\n")[0];
  return isDiskFull(err) ? `disk full: cannot write ${e.path ?? "a file this task needs"} (${first})` : first;
}
