// The one step that turns a requested task into a resolved one (ResolvedTask, core/run/task-types.ts): every value
// a task runs with is taken here from where it can come from, in the order RESOLUTION gives — one row per task field
// (core/task-fields.ts: a test fails on a field without a row) and one for each value a task gets only from elsewhere
// (its model, its finalize contract). What one value makes of another (a structured result requires finalize, a
// runtime or a cache-true fork that cannot honour it relaxes it) is decided here too, after the table. The stages
// that run the task read the result and decide nothing again.
import { BUDGET_KEYS, type Budget } from "../budget.ts";
import type { Profile } from "../profiles/profile.ts";
import { findProfile } from "../profiles/profile.ts";
import type { SessionRecord } from "../store/store-types.ts";
import type { TaskFieldValues } from "../task-fields.ts";
import { trustFor, type Engine } from "../run/engine.ts";
import { savedProjectTrust } from "../run/default-model.ts";
import { chooseModel } from "../run/model-choice.ts";
import { confinedTask } from "../run/runners/where.ts";
import { cacheTrueFork } from "../run/fork.ts";
import { DEFAULT_GATE_RETRIES, DEFAULT_GATE_TIMEOUT, type GateSpec } from "../run/process/gate.ts";
import type { FinalizeMode } from "../run/process/finalize-contract.ts";
import { runtimeLimits } from "../run/runtimes/limits.ts";
import { DEFAULT_AGENT, type ResolvedTask } from "../run/task-types.ts";
import { realFolder } from "./folders.ts";
import type { CallDefaults, CallTask } from "./request.ts";

/** Where a value can come from. */
export type Source =
  /** the task's own field */
  | "task"
  /** the call's default: the CLI's flags, the tool's call-level `profile`, the `subagent` tool's contract */
  | "front"
  /** its agent file's front matter */
  | "agent"
  /** the last run of the session it resumes */
  | "resumed"
  /** the `subagents` settings */
  | "settings"
  /** the built-in default */
  | "builtin";

/** Every value the table decides, by the name a task field (or a source) gives it. */
type Values = Omit<TaskFieldValues, "sandbox" | "keepProcesses"> & {
  sandbox: boolean;
  keepProcesses: boolean;
  model: string;
  finalize: FinalizeMode;
};
type Name = keyof Values;
type View = { [K in Name]?: Values[K] };

/** Where one value comes from, first given first; `any`: a switch that only adds up (on wherever one source turns
 *  it on: the sandbox, which no task or agent file can turn off). */
type Row = { from: readonly Source[]; any?: true };

export const RESOLUTION = {
  name: { from: ["task"] },
  prompt: { from: ["task"] },
  cwd: { from: ["task", "front"] },
  profile: { from: ["task", "front", "resumed", "builtin"] },
  timeout: { from: ["task", "front", "agent", "settings"] },
  resume: { from: ["task"] },
  files: { from: ["task"] },
  isolation: { from: ["task", "front", "agent", "resumed"] },
  after: { from: ["task"] },
  gate: { from: ["task", "front", "agent"] },
  gateTimeout: { from: ["task", "front", "agent", "builtin"] },
  gateRetries: { from: ["task", "front", "agent", "builtin"] },
  outputSchema: { from: ["task", "agent"] },
  context: { from: ["task", "front", "agent", "builtin"] },
  sandbox: { from: ["settings", "task", "front", "resumed", "agent"], any: true },
  runner: { from: ["task", "front", "agent", "resumed", "settings"] },
  runtime: { from: ["task", "front", "agent", "builtin"] },
  keepProcesses: { from: ["task", "agent", "builtin"] },
  maxTurns: { from: ["task", "front", "agent"] },
  maxTokens: { from: ["task", "front", "agent"] },
  maxCost: { from: ["task", "front", "agent"] },
  model: { from: ["front", "agent"] },
  finalize: { from: ["agent", "settings", "front", "builtin"] },
} as const satisfies { [K in Name]: Row };

/** The built-in defaults: the last word of a row that names "builtin". */
const BUILTIN: View = {
  profile: DEFAULT_AGENT,
  gateTimeout: DEFAULT_GATE_TIMEOUT,
  gateRetries: DEFAULT_GATE_RETRIES,
  context: "fresh",
  runtime: "pi",
  keepProcesses: false,
  finalize: "optional",
};

/** The agent file's front matter as the table reads it: the same names, finalize as a contract. */
const AGENT_FIELDS = [
  "timeout",
  "isolation",
  "gate",
  "gateTimeout",
  "gateRetries",
  "outputSchema",
  "context",
  "sandbox",
  "runner",
  "runtime",
  "keepProcesses",
  "maxTurns",
  "maxTokens",
  "maxCost",
  "model",
] as const satisfies readonly (keyof Profile & Name)[];

const contract = (explicit: boolean | undefined): FinalizeMode | undefined =>
  explicit === undefined ? undefined : explicit ? "required" : "off";

function agentView(p: Profile | undefined): View {
  if (!p) return {};
  const view: Record<string, unknown> = { finalize: contract(p.finalize) };
  for (const k of AGENT_FIELDS) view[k] = p[k];
  return view as View;
}

/** A resumed session runs as its last run did: its agent; its worktree (its pi session file names the worktree as its
 *  cwd, which is made again at the same path: worktrees are named for the session); where it ran and whether in the
 *  sandbox (a per-task --sandbox or runner is not lost) — from the latest run that got that far, since a run refused
 *  before it recorded neither. */
function resumedView(prior: SessionRecord | null): View {
  if (!prior) return {};
  const last = prior.runs.at(-1);
  const placed = prior.runs.filter((r) => r.runner !== undefined).at(-1);
  return {
    profile: prior.agent,
    ...(last?.isolation ? { isolation: "worktree" as const } : {}),
    runner: placed?.runner,
    sandbox: placed?.sandbox,
  };
}

type Views = Record<Source, View>;

function fromRow<K extends Name>(views: Views, k: K): Values[K] | undefined {
  const row: Row = RESOLUTION[k];
  if (row.any) return row.from.some((s) => views[s][k] === true) as Values[K];
  for (const s of row.from) {
    const v = views[s][k];
    if (v !== undefined) return v as Values[K];
  }
  return undefined;
}

const defined = <T extends Record<string, unknown>>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/**
 * A task as it will run: each value from the first place the table names that gives one; `prior` is the session
 * it resumes (null: none), `sessionId` its id when it has none of its own.
 */
export function resolveTask(
  engine: Pick<Engine, "profiles" | "settings" | "call" | "host" | "agentDir" | "caches" | "piVersion">,
  task: CallTask,
  front: CallDefaults,
  prior: SessionRecord | null,
  sessionId: () => string,
): ResolvedTask {
  const { settings } = engine;
  const views: Views = {
    task: { ...task, ...task.budget },
    front: { ...front, ...front.budget },
    agent: {},
    resumed: resumedView(prior),
    settings: {
      timeout: settings.timeout,
      sandbox: settings.sandbox === "on",
      runner: settings.runner,
      finalize: contract(settings.finalize),
    },
    builtin: BUILTIN,
  };
  const take = <K extends Name>(k: K) => fromRow(views, k);
  const asked = take("profile")!;
  const file = asked === DEFAULT_AGENT ? undefined : findProfile(engine.profiles, asked);
  views.agent = agentView(file);
  const agent = file?.name ?? asked;

  const budget: Budget = {};
  for (const k of BUDGET_KEYS) {
    const v = take(k);
    if (v !== undefined) budget[k] = v;
  }
  const command = take("gate");
  const gate: GateSpec | undefined = command?.trim()
    ? { command, timeoutSec: take("gateTimeout")!, retries: take("gateRetries")! }
    : undefined;
  const outputSchema = take("outputSchema");
  const runtime = take("runtime")!;
  // Every folder by its real path from here on: what is checked is what the child will be given (folders.ts).
  const cwd = realFolder(engine, take("cwd")!);
  const isolation = take("isolation");
  // A resumed session continues its own conversation: it never starts from a copy of the parent's.
  const context = task.resume ? "fresh" : take("context")!;
  const cacheTrue =
    context === "fork" &&
    runtime === "pi" &&
    cacheTrueFork({ cwd, isolated: !!isolation, parent: engine.call.parentPrompt, profile: file });
  // A structured result needs the finalize tool; another harness's CLI has none (its limits say so); a cache-true
  // fork answers in plain text, since the tool, which only the child has, would end the prefix it shares with its
  // parent at the tool list (docs/BENCHMARKS.md measures it) — unless a structured result needs it.
  const asks = outputSchema ? "required" : take("finalize")!;
  const limits = runtimeLimits(runtime, { gate: !!gate, outputSchema: !!outputSchema, finalize: asks });
  const finalize = cacheTrue && asks === "required" && !outputSchema ? "optional" : limits.finalize;
  const runner = take("runner")!;
  const sandbox = take("sandbox")!;
  const model = take("model");
  // A confined pi child is told pi's own decision even where the call does not know one (the CLI): the provider
  // whose credentials it gets is decided with that decision (child-notes.ts childProvider).
  const trust =
    trustFor(engine.call.projectTrust, cwd) ??
    (confinedTask({ runner, sandbox }) && runtime === "pi" ? savedProjectTrust(engine, cwd) : undefined);
  return defined<ResolvedTask>({
    name: take("name")!,
    prompt: take("prompt")!,
    cwd,
    agent,
    model,
    modelChoice: chooseModel(engine, file ?? null, model),
    trust,
    timeoutSec: take("timeout")!,
    resume: task.resume,
    files: take("files"),
    sessionId: task.resume ?? task.sessionId ?? sessionId(),
    isolation,
    after: take("after"),
    runner,
    sandbox,
    runtime,
    context,
    finalize,
    keepProcesses: take("keepProcesses")!,
    budget,
    gate,
    outputSchema,
    cacheTrueFork: cacheTrue || undefined,
    notes: limits.notes,
  });
}
