// Validates the `delegate_to_subagents` parameters (docs/pi-extension.md), for the pi tool, for `subagents delegate
// --tasks` and for saved workflows: the call's own fields here, each task's by its field definitions
// (task-fields.ts). Every rejection names the field, so a model (or a person) can fix the call in one go.
import { budgetValue } from "./budget.ts";
import { dagProblem } from "./task-graph.ts";
import { InputError, isObj, readTask, str, type DelegateTask } from "./task-fields.ts";

export { InputError };

export const MAX_TASKS = 16;

export type DelegateParams = { tasks: DelegateTask[]; profile?: string; background?: boolean; maxCost?: number };

export function parseDelegateParams(v: unknown): DelegateParams {
  if (!isObj(v)) throw new InputError('parameters must be an object with "tasks"');
  // `workflow` is replaced by a saved workflow's tasks before this check (core/call/workflow.ts); `description` documents a workflow file.
  for (const k of Object.keys(v))
    if (!["tasks", "profile", "background", "maxCost", "workflow", "description"].includes(k))
      throw new InputError(`${k} is not a known parameter (known: tasks, profile, background, maxCost, workflow)`);
  // Only the pi tool resolves `workflow` (before this check); in a --tasks file it has no meaning.
  if (v.workflow !== undefined)
    throw new InputError(
      'workflow (a saved workflow\'s "NAME input") cannot be combined with a tasks document; in the CLI run it with: subagents flow NAME "input"',
    );
  const maxCost = v.maxCost === undefined || v.maxCost === null ? undefined : budgetValue("maxCost", v.maxCost);
  if (typeof maxCost === "string") throw new InputError(maxCost);
  if (v.background !== undefined && typeof v.background !== "boolean")
    throw new InputError("background must be true or false");
  if (!Array.isArray(v.tasks)) throw new InputError("tasks must be an array of 1–16 task objects");
  if (v.tasks.length === 0) throw new InputError("tasks must contain at least one task");
  if (v.tasks.length > MAX_TASKS)
    throw new InputError(`tasks has ${v.tasks.length} entries; at most ${MAX_TASKS} tasks per call`);
  const tasks = v.tasks.map((t, i) => readTask(i, t));
  const profile = str("profile", v.profile, false);
  const seen = new Set<string>();
  for (const t of tasks) {
    if (t.resume && seen.has(t.resume)) throw new InputError(`two tasks resume the same session "${t.resume}"`);
    if (t.resume) seen.add(t.resume);
  }
  const graph = dagProblem(tasks);
  if (graph) throw new InputError(graph);
  return {
    tasks,
    ...(profile ? { profile } : {}),
    ...(v.background ? { background: true } : {}),
    ...(maxCost !== undefined ? { maxCost } : {}),
  };
}
