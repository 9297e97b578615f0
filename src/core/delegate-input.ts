// Validates the `delegate_to_subagents` parameters (docs/pi-extension.md), for the pi tool and for `subagents delegate
// --tasks`. Every rejection names the field, so a model (or a person) can fix the call in one go.
import type { FileSpec } from "./files.ts";
import { isIsolationMode, type IsolationMode } from "./isolation-types.ts";
import { BUDGET_KEYS, readBudget, budgetValue, type Budget } from "./budget.ts";
import { dagProblem } from "./task-graph.ts";
import { outputSchemaProblem } from "./output-schema.ts";
import { taskEngineFields, type RunnerName } from "./runner-settings.ts";
import type { RuntimeName } from "./runtime-names.ts";

export const MAX_TASKS = 16;

export type DelegateTask = {
  name: string;
  prompt: string;
  cwd?: string;
  profile?: string;
  timeout?: number;
  resume?: string;
  files?: FileSpec[];
  isolation?: IsolationMode;
  budget?: Budget;
  after?: string[];
  gate?: string;
  gateTimeout?: number;
  gateRetries?: number;
  outputSchema?: Record<string, unknown>;
  context?: "fork" | "fresh";
  sandbox?: boolean;
  keepProcesses?: boolean;
  runner?: RunnerName;
  runtime?: RuntimeName;
};

export type DelegateParams = { tasks: DelegateTask[]; profile?: string; background?: boolean; maxCost?: number };

export class InputError extends Error {}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** Spec 000's cwd rules for tool input: absolute, and no `..` segments. */
export function checkCwd(cwd: string): string | null {
  if (!cwd.startsWith("/")) return "cwd must be an absolute path";
  if (cwd.split("/").includes("..")) return "cwd must not contain '..' path segments";
  return null;
}

function str(field: string, v: unknown, required: boolean): string | undefined {
  if (v === undefined || v === null) {
    if (required) throw new InputError(`${field} is required`);
    return undefined;
  }
  if (typeof v !== "string")
    throw new InputError(`${field} must be a string (got ${Array.isArray(v) ? "array" : typeof v})`);
  if (required && !v.trim()) throw new InputError(`${field} must not be empty`);
  return v;
}

function posInt(field: string, v: unknown, min: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isFinite(n))
    throw new InputError(`${field} must be a number (got ${JSON.stringify(v)?.slice(0, 40)})`);
  if (n < min) throw new InputError(`${field} must be ≥ ${min} (got ${n})`);
  return n;
}

function fileSpec(field: string, v: unknown): FileSpec {
  if (typeof v === "string") {
    if (!v.trim()) throw new InputError(`${field} must not be an empty path`);
    return v;
  }
  if (!isObj(v)) throw new InputError(`${field} must be a path string or an object with "path"`);
  const path = str(`${field}.path`, v.path, true)!;
  const known = new Set(["path", "start", "end", "head", "tail"]);
  for (const k of Object.keys(v))
    if (!known.has(k)) throw new InputError(`${field}.${k} is not a known field (use start/end, head or tail)`);
  const forms =
    ["head", "tail"].filter((k) => v[k] !== undefined).length + (v.start !== undefined || v.end !== undefined ? 1 : 0);
  if (forms > 1) throw new InputError(`${field}: use only one of start/end, head or tail`);
  if (v.head !== undefined) return { path, head: posInt(`${field}.head`, v.head, 1)! };
  if (v.tail !== undefined) return { path, tail: posInt(`${field}.tail`, v.tail, 1)! };
  const start = posInt(`${field}.start`, v.start, 1);
  const end = posInt(`${field}.end`, v.end, 1);
  if (start !== undefined && end !== undefined && end < start) throw new InputError(`${field}.end must be ≥ start`);
  return { path, ...(start !== undefined ? { start } : {}), ...(end !== undefined ? { end } : {}) };
}

/** Every field a task may have (pi's tool schema lists the same: test/unit/core/call/contract.test.ts). */
export const TASK_FIELDS = new Set([
  "name",
  "prompt",
  "cwd",
  "profile",
  "timeout",
  "resume",
  "files",
  "isolation",
  "after",
  "gate",
  "gateTimeout",
  "gateRetries",
  "outputSchema",
  "context",
  "sandbox",
  "keepProcesses",
  "runner",
  "runtime",
  ...BUDGET_KEYS,
]);

/** `isolation`: "worktree" (the only mode) or absent. */
export function isolationValue(field: string, v: unknown): IsolationMode | undefined {
  if (v === undefined || v === null) return undefined;
  if (isIsolationMode(v)) return v;
  throw new InputError(`${field} must be "worktree" (got ${JSON.stringify(v)?.slice(0, 40)})`);
}

function task(i: number, v: unknown): DelegateTask {
  const f = `tasks[${i}]`;
  if (!isObj(v)) throw new InputError(`${f} must be an object with "name" and "prompt"`);
  for (const k of Object.keys(v))
    if (!TASK_FIELDS.has(k))
      throw new InputError(`${f}.${k} is not a known field (known: ${[...TASK_FIELDS].join(", ")})`);
  const out: DelegateTask = { name: str(`${f}.name`, v.name, true)!, prompt: str(`${f}.prompt`, v.prompt, true)! };
  const cwd = str(`${f}.cwd`, v.cwd, false);
  if (cwd !== undefined) {
    const problem = checkCwd(cwd);
    if (problem) throw new InputError(`${f}.cwd: ${problem}`);
    out.cwd = cwd;
  }
  const profile = str(`${f}.profile`, v.profile, false);
  if (profile) out.profile = profile;
  const timeout = posInt(`${f}.timeout`, v.timeout, 1);
  if (timeout !== undefined) out.timeout = timeout;
  const resume = str(`${f}.resume`, v.resume, false);
  if (resume) out.resume = resume;
  const isolation = isolationValue(`${f}.isolation`, v.isolation);
  if (isolation) out.isolation = isolation;
  if (v.keepProcesses !== undefined && v.keepProcesses !== null) {
    if (typeof v.keepProcesses !== "boolean") throw new InputError(`${f}.keepProcesses must be true or false`);
    if (v.keepProcesses) out.keepProcesses = true;
  }
  const where = taskEngineFields(f, v);
  if (typeof where === "string") throw new InputError(where);
  Object.assign(out, where);
  if (v.files !== undefined) {
    if (!Array.isArray(v.files)) throw new InputError(`${f}.files must be an array`);
    out.files = v.files.map((x, j) => fileSpec(`${f}.files[${j}]`, x));
  }
  if (v.after !== undefined && v.after !== null) {
    if (!Array.isArray(v.after) || v.after.some((n) => typeof n !== "string" || !n))
      throw new InputError(`${f}.after must be a list of task names`);
    if (v.after.length) out.after = [...new Set(v.after as string[])];
  }
  const gate = str(`${f}.gate`, v.gate, false);
  if (gate !== undefined && !gate.trim()) throw new InputError(`${f}.gate must be a shell command`);
  if (gate) out.gate = gate;
  const gateTimeout = posInt(`${f}.gateTimeout`, v.gateTimeout, 1);
  if (gateTimeout !== undefined) out.gateTimeout = gateTimeout;
  const gateRetries = posInt(`${f}.gateRetries`, v.gateRetries, 0);
  if (gateRetries !== undefined) {
    if (!Number.isInteger(gateRetries)) throw new InputError(`${f}.gateRetries must be a whole number`);
    out.gateRetries = gateRetries;
  }
  if (v.context !== undefined && v.context !== null) {
    if (v.context !== "fork" && v.context !== "fresh")
      throw new InputError(`${f}.context must be "fork" or "fresh" (got ${JSON.stringify(v.context)?.slice(0, 40)})`);
    out.context = v.context;
  }
  if (v.outputSchema !== undefined && v.outputSchema !== null) {
    const problem = outputSchemaProblem(`${f}.outputSchema`, v.outputSchema);
    if (problem) throw new InputError(problem);
    out.outputSchema = v.outputSchema as Record<string, unknown>;
  }
  const b = readBudget(v);
  if ("problem" in b) throw new InputError(`${f}.${b.problem}`);
  if (Object.keys(b.budget).length) out.budget = b.budget;
  return out;
}

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
  const tasks = v.tasks.map((t, i) => task(i, t));
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
