// A task's fields, defined once: what pi's tool schema offers the model (terse: every word is in every parent
// request), how a task document reads each one (the `delegate_to_subagents` parameters, a `--tasks` file, a saved
// workflow: delegate-input.ts), and so the DelegateTask type. docs/pi-extension.md's "Task fields" table lists the
// same fields (test/e2e/docs.test.ts checks it against TASK_FIELDS). Every rejection names the field.
import { Type, type TSchema } from "@sinclair/typebox";
import { decimal } from "./decimal.ts";
import { BUDGET_KEYS, budgetValue, type Budget, type BudgetKey } from "./budget.ts";
import type { FileSpec } from "./files.ts";
import { isIsolationMode, type IsolationMode } from "./isolation-types.ts";
import { outputSchemaProblem } from "./output-schema.ts";
import { RUNNER_NAMES, type RunnerName } from "./runner-settings.ts";
import { RUNTIME_NAMES, type RuntimeName } from "./runtime-names.ts";

export class InputError extends Error {}

export const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);
const given = (v: unknown) => v !== undefined && v !== null;
const shown = (v: unknown) => JSON.stringify(v)?.slice(0, 40);

/** The cwd rules for tool input (docs/pi-extension.md "Task fields"): absolute, and no `..` segments. */
export function checkCwd(cwd: string): string | null {
  if (!cwd.startsWith("/")) return "cwd must be an absolute path";
  if (cwd.split("/").includes("..")) return "cwd must not contain '..' path segments";
  return null;
}

export function str(field: string, v: unknown, required: boolean): string | undefined {
  if (!given(v)) {
    if (required) throw new InputError(`${field} is required`);
    return undefined;
  }
  if (typeof v !== "string")
    throw new InputError(`${field} must be a string (got ${Array.isArray(v) ? "array" : typeof v})`);
  if (required && !v.trim()) throw new InputError(`${field} must not be empty`);
  return v;
}

function posInt(field: string, v: unknown, min: number): number | undefined {
  if (!given(v)) return undefined;
  const n = typeof v === "string" ? decimal(v) : v;
  if (typeof n !== "number" || !Number.isFinite(n)) throw new InputError(`${field} must be a number (got ${shown(v)})`);
  if (n < min) throw new InputError(`${field} must be ≥ ${min} (got ${n})`);
  return n;
}

function oneOf<T extends string>(field: string, v: unknown, names: readonly T[]): T | undefined {
  if (!given(v)) return undefined;
  if ((names as readonly unknown[]).includes(v)) return v as T;
  throw new InputError(`${field} must be one of ${names.join(", ")} (got ${shown(v)})`);
}

/** A flag that is only ever turned on: `true`, or absent. */
function onlyTrue(field: string, v: unknown): true | undefined {
  if (!given(v)) return undefined;
  if (typeof v !== "boolean") throw new InputError(`${field} must be true or false`);
  return v || undefined;
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

/** `isolation`: "worktree" (the only mode) or absent. */
export function isolationValue(field: string, v: unknown): IsolationMode | undefined {
  if (!given(v)) return undefined;
  if (isIsolationMode(v)) return v;
  throw new InputError(`${field} must be "worktree" (got ${shown(v)})`);
}

function budget(key: BudgetKey) {
  return (field: string, v: unknown): number | undefined => {
    if (!given(v)) return undefined;
    const n = budgetValue(key, v);
    if (typeof n === "string") throw new InputError(`${field.slice(0, -key.length)}${n}`);
    return n;
  };
}

/** One field: its schema in the pi tool, and how a task document's value is read (undefined: not given). */
type Field<T> = { schema: TSchema; read: (field: string, v: unknown) => T | undefined };
const field = <T>(schema: TSchema, read: (field: string, v: unknown) => T | undefined): Field<T> => ({ schema, read });

const FILE_SPEC = Type.Union([
  Type.String(),
  Type.Object(
    {
      path: Type.String(),
      start: Type.Optional(Type.Number({ minimum: 1 })),
      end: Type.Optional(Type.Number({ minimum: 1 })),
      head: Type.Optional(Type.Number({ minimum: 1 })),
      tail: Type.Optional(Type.Number({ minimum: 1 })),
    },
    { additionalProperties: false },
  ),
]);

/** `isolation` in both tools' schemas. Terse on purpose: every word here is in the model's prompt on every call; a
 *  description says only what the name, the type and the tool's guidelines do not. */
export const ISOLATION_SCHEMA = Type.Literal("worktree", { description: "Own git worktree, changes on a branch" });

/** Every field a task may have, in the order the tool schema and the docs list them. */
export const TASK_FIELD_SPECS = {
  name: field(Type.String(), (f, v) => str(f, v, true)),
  prompt: field(Type.String(), (f, v) => str(f, v, true)),
  cwd: field(Type.String({ description: "Absolute" }), (f, v) => {
    const cwd = str(f, v, false);
    const problem = cwd === undefined ? null : checkCwd(cwd);
    if (problem) throw new InputError(`${f}: ${problem}`);
    return cwd;
  }),
  profile: field(Type.String({ description: "Agent name" }), (f, v) => str(f, v, false) || undefined),
  timeout: field(Type.Number({ minimum: 1, description: "Seconds" }), (f, v) => posInt(f, v, 1)),
  resume: field(Type.String({ description: "Session id to continue" }), (f, v) => str(f, v, false) || undefined),
  files: field(Type.Array(FILE_SPEC), (f, v) => {
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) throw new InputError(`${f} must be an array`);
    return v.map((x, j) => fileSpec(`${f}[${j}]`, x));
  }),
  isolation: field(ISOLATION_SCHEMA, isolationValue),
  after: field(
    Type.Array(Type.String(), { description: "Tasks to wait for; {{name}} in prompt = its output" }),
    (f, v) => {
      if (!given(v)) return undefined;
      if (!Array.isArray(v) || v.some((n) => typeof n !== "string" || !n))
        throw new InputError(`${f} must be a list of task names`);
      return v.length ? [...new Set(v as string[])] : undefined;
    },
  ),
  gate: field(Type.String({ description: "Shell check; exit 0 passes" }), (f, v) => {
    const gate = str(f, v, false);
    if (gate !== undefined && !gate.trim()) throw new InputError(`${f} must be a shell command`);
    return gate || undefined;
  }),
  gateTimeout: field(Type.Number(), (f, v) => posInt(f, v, 1)),
  gateRetries: field(Type.Integer(), (f, v) => {
    const n = posInt(f, v, 0);
    if (n !== undefined && !Number.isInteger(n)) throw new InputError(`${f} must be a whole number`);
    return n;
  }),
  outputSchema: field(Type.Object({}), (f, v) => {
    if (!given(v)) return undefined;
    const problem = outputSchemaProblem(f, v);
    if (problem) throw new InputError(problem);
    return v as Record<string, unknown>;
  }),
  context: field(
    Type.Union([Type.Literal("fork"), Type.Literal("fresh")], {
      description: "fork: starts from a copy of this conversation",
    }),
    (f, v) => {
      if (!given(v)) return undefined;
      if (v !== "fork" && v !== "fresh") throw new InputError(`${f} must be "fork" or "fresh" (got ${shown(v)})`);
      return v;
    },
  ),
  sandbox: field(Type.Boolean(), onlyTrue),
  runner: field(Type.Union(RUNNER_NAMES.map((n) => Type.Literal(n))), (f, v): RunnerName | undefined =>
    oneOf(f, v, RUNNER_NAMES),
  ),
  runtime: field(Type.Union(RUNTIME_NAMES.map((n) => Type.Literal(n))), (f, v): RuntimeName | undefined =>
    oneOf(f, v, RUNTIME_NAMES),
  ),
  keepProcesses: field(Type.Boolean(), onlyTrue),
  // Budgets: terse on purpose (every word here is in every parent request); the names say what they are.
  maxTurns: field(Type.Integer(), budget("maxTurns")),
  maxTokens: field(Type.Integer(), budget("maxTokens")),
  maxCost: field(Type.Number({ description: "USD" }), budget("maxCost")),
};

type Specs = typeof TASK_FIELD_SPECS;
/** Each field's value, once read (core/call/resolve.ts takes each from where it comes from by these names). */
export type TaskFieldValues = { [K in keyof Specs]: NonNullable<ReturnType<Specs[K]["read"]>> };
type Values = TaskFieldValues;

/** A task of a delegate call as a task document gives it (its budgets together). */
export type DelegateTask = Pick<Values, "name" | "prompt"> &
  Partial<Omit<Values, "name" | "prompt" | BudgetKey>> & { budget?: Budget };

/** Every field a task may have. */
export const TASK_FIELDS = new Set(Object.keys(TASK_FIELD_SPECS));

/** The task at `tasks[i]` of a task document, each field read by its definition. */
export function readTask(i: number, v: unknown): DelegateTask {
  const f = `tasks[${i}]`;
  if (!isObj(v)) throw new InputError(`${f} must be an object with "name" and "prompt"`);
  for (const k of Object.keys(v))
    if (!TASK_FIELDS.has(k))
      throw new InputError(`${f}.${k} is not a known field (known: ${[...TASK_FIELDS].join(", ")})`);
  const out: Record<string, unknown> = {};
  const spent: Budget = {};
  for (const [k, spec] of Object.entries(TASK_FIELD_SPECS)) {
    const value = spec.read(`${f}.${k}`, v[k]);
    if (value === undefined) continue;
    if ((BUDGET_KEYS as string[]).includes(k)) spent[k as BudgetKey] = value as number;
    else out[k] = value;
  }
  if (Object.keys(spent).length) out.budget = spent;
  return out as DelegateTask;
}

/** The task object of the tools' schema (core/call/schemas.ts): every field, none required but name and prompt. */
export const TASK_SCHEMA = Type.Object(
  Object.fromEntries(
    Object.entries(TASK_FIELD_SPECS).map(([k, s]) => [
      k,
      k === "name" || k === "prompt" ? s.schema : Type.Optional(s.schema),
    ]),
  ),
  { additionalProperties: false },
);
