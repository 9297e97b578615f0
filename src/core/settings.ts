// Settings under `subagents` in pi's settings.json: the global file, then the project's (key by key).
// Never throws: a broken file or value becomes a warning and the default stays.
import { DEFAULT_MAX_MESSAGES } from "./team.ts";
import type { Host } from "./host.ts";
import { mcpField, type McpChoice } from "./mcp-choice.ts";
import { defaultEngineSettings, mergeEngineSettings, type EngineSettings } from "./runner-settings.ts";
import { DEFAULT_MAX_SPAWNS, mergeCapSettings, type CapSettings } from "./cap-settings.ts";
import { defaultHookSettings, mergeHookSettings, type HookSettings } from "./hook-settings.ts";
import { defaultWorktreeSettings, mergeWorktreeSettings, type WorktreeSettings } from "./worktree-settings.ts";

export const TOOL_NAMES = [
  "delegate_to_subagents",
  "get_subagent_output",
  "get_subagent_session",
  "list_subagent_profiles",
  "subagent",
];
/** Tools a user turns on by naming them in subagents.tools (each word of a schema is in every parent request). */
export const OPTIONAL_TOOL_NAMES = ["subagent_batch"];

export type Settings = {
  maxLinesPerWindow: number;
  extendTimeoutDebounce: number;
  loopingToolCount: number;
  concurrency: number;
  maxDepth: number;
  /** Unset: each front's default (required for `subagent`, optional for delegate_to_subagents and the CLI). */
  finalize?: boolean;
  transport: "compact" | "json";
  childRuntime: "auto" | "bun" | "node";
  /** Which pi runs children: "auto" (the front decides: docs/settings.md), "embedded", "system", or a path to a pi. */
  childPi: string;
  tools: string[];
  projectAgents: "ask" | "allow" | "deny";
  timeout: number;
  maxRuntime: number;
  /** Seconds a call may spend held by provider rate limits before its rate-limited tasks fail (RATE_LIMITED). */
  rateLimitWait: number;
  /** Model names in agent files → the model to run ("provider/id", "inherit" or "default"); see model-resolve.ts. */
  modelAliases: Record<string, string>;
  /** Models a task continues on, in order, when its own fails (profiles' fallbackModels win). */
  fallbackModels: string[];
  /** Children's questions: "auto" asks whoever can answer (ask.ts), "deny" never asks and records them. */
  ask: "auto" | "deny";
  /** Seconds a child may wait for an answer before it is told "no answer". */
  askTimeout: number;
  /** Messages the children of one call may send each other in all (core/team.ts). */
  maxMessages: number;
  /** MCP servers children may start (pi 1.x), unless their agent says (`mcp`): all, none, or the named ones. */
  mcp: McpChoice;
  /** A call with more tasks than it runs at once keeps its children for its next tasks (src/core/run/process/pool.ts). */
  reuseChildren: boolean;
} & EngineSettings &
  CapSettings &
  HookSettings &
  WorktreeSettings;

export function defaultSettings(): Settings {
  return {
    maxLinesPerWindow: 15,
    extendTimeoutDebounce: 30,
    loopingToolCount: 5,
    concurrency: 4,
    maxDepth: 1,
    transport: "compact",
    childRuntime: "auto",
    childPi: "auto",
    tools: [...TOOL_NAMES],
    projectAgents: "ask",
    timeout: 600,
    maxRuntime: 3600,
    rateLimitWait: 300,
    modelAliases: {},
    fallbackModels: [],
    ask: "auto",
    askTimeout: 600,
    maxMessages: DEFAULT_MAX_MESSAGES,
    mcp: true,
    reuseChildren: true,
    ...defaultEngineSettings(),
    maxSpawnsPerSession: DEFAULT_MAX_SPAWNS,
    ...defaultHookSettings(),
    ...defaultWorktreeSettings(),
  };
}

type NumKey =
  | "maxLinesPerWindow"
  | "extendTimeoutDebounce"
  | "loopingToolCount"
  | "concurrency"
  | "maxDepth"
  | "timeout"
  | "maxRuntime"
  | "rateLimitWait"
  | "askTimeout"
  | "maxMessages";
const NUMBERS: Record<NumKey, { min: number; max: number; aliases: string[] }> = {
  maxLinesPerWindow: { min: 1, max: 200, aliases: ["max_lines_per_window"] },
  extendTimeoutDebounce: { min: 0, max: 300, aliases: ["extend_timeout_debounce"] },
  loopingToolCount: { min: 0, max: 50, aliases: ["looping_tool_count"] },
  concurrency: { min: 1, max: 16, aliases: [] },
  maxDepth: { min: 0, max: 10, aliases: ["max_depth"] },
  timeout: { min: 1, max: 86_400, aliases: [] },
  maxRuntime: { min: 1, max: 604_800, aliases: ["max_runtime"] },
  rateLimitWait: { min: 0, max: 86_400, aliases: [] },
  askTimeout: { min: 0, max: 86_400, aliases: [] },
  maxMessages: { min: 0, max: 10_000, aliases: [] },
};
const ENUMS = {
  transport: ["compact", "json"],
  childRuntime: ["auto", "bun", "node"],
  projectAgents: ["ask", "allow", "deny"],
  ask: ["auto", "deny"],
} as const;

const CHILD_PI_WORDS = ["auto", "embedded", "system"];

/** Applies one raw `subagents` object over base. Pure; `where` names the source in warnings. `userScope` is false
 *  for a project's settings: a repository must not choose which program runs as every child. */
export function mergeSettings(
  base: Settings,
  raw: unknown,
  where = "settings",
  userScope = true,
): { settings: Settings; warnings: string[] } {
  const out: Settings = { ...base, tools: [...base.tools], modelAliases: { ...base.modelAliases } };
  const warnings: string[] = [];
  if (raw === undefined || raw === null) return { settings: out, warnings };
  if (typeof raw !== "object" || Array.isArray(raw))
    return { settings: out, warnings: [`${where}: "subagents" must be an object; ignored`] };
  const r = raw as Record<string, unknown>;
  for (const [key, spec] of Object.entries(NUMBERS) as [NumKey, (typeof NUMBERS)[NumKey]][]) {
    const name = [key, ...spec.aliases].find((k) => r[k] !== undefined);
    if (!name) continue;
    const v = r[name];
    if (typeof v !== "number" || !Number.isFinite(v)) {
      warnings.push(`${where}: subagents.${name} must be a number; ignored`);
      continue;
    }
    const clamped = Math.min(spec.max, Math.max(spec.min, v));
    if (clamped !== v)
      warnings.push(`${where}: subagents.${name} = ${v} is out of range ${spec.min}–${spec.max}; using ${clamped}`);
    out[key] = clamped;
  }
  for (const [key, allowed] of Object.entries(ENUMS) as [keyof typeof ENUMS, readonly string[]][]) {
    const v = r[key];
    if (v === undefined) continue;
    if (typeof v !== "string" || !allowed.includes(v)) {
      warnings.push(`${where}: subagents.${key} must be one of ${allowed.join(", ")}; ignored`);
      continue;
    }
    (out as Record<string, unknown>)[key] = v;
  }
  if (r.childPi !== undefined) {
    const v = r.childPi;
    if (typeof v === "string" && CHILD_PI_WORDS.includes(v)) out.childPi = v;
    else if (typeof v === "string" && v.startsWith("/") && userScope) out.childPi = v;
    else if (typeof v === "string" && v.startsWith("/"))
      warnings.push(`${where}: subagents.childPi may name a path only in your own settings (${v}); ignored`);
    else warnings.push(`${where}: subagents.childPi must be ${CHILD_PI_WORDS.join(", ")} or an absolute path; ignored`);
  }
  if (r.finalize !== undefined) {
    if (typeof r.finalize === "boolean") out.finalize = r.finalize;
    else warnings.push(`${where}: subagents.finalize must be true or false; ignored`);
  }
  if (r.reuseChildren !== undefined) {
    if (typeof r.reuseChildren === "boolean") out.reuseChildren = r.reuseChildren;
    else warnings.push(`${where}: subagents.reuseChildren must be true or false; ignored`);
  }
  if (r.tools !== undefined) {
    if (Array.isArray(r.tools) && r.tools.every((t) => typeof t === "string")) {
      const known = [...TOOL_NAMES, ...OPTIONAL_TOOL_NAMES];
      const unknown = (r.tools as string[]).filter((t) => !known.includes(t));
      if (unknown.length)
        warnings.push(`${where}: subagents.tools has unknown names ${unknown.join(", ")} (known: ${known.join(", ")})`);
      out.tools = (r.tools as string[]).filter((t) => known.includes(t));
    } else warnings.push(`${where}: subagents.tools must be a list of tool names; ignored`);
  }
  if (r.modelAliases !== undefined) {
    const v = r.modelAliases;
    if (v && typeof v === "object" && !Array.isArray(v)) {
      for (const [name, model] of Object.entries(v as Record<string, unknown>)) {
        if (typeof model === "string" && model.trim()) out.modelAliases[name] = model.trim();
        else
          warnings.push(
            `${where}: subagents.modelAliases.${name} must be a model name ("provider/id", "inherit" or "default"); ignored`,
          );
      }
    } else warnings.push(`${where}: subagents.modelAliases must be an object of name → model; ignored`);
  }
  if (r.fallbackModels !== undefined) {
    const v = r.fallbackModels;
    if (Array.isArray(v) && v.every((m) => typeof m === "string" && m.trim()))
      out.fallbackModels = v.map((m: string) => m.trim());
    else warnings.push(`${where}: subagents.fallbackModels must be a list of model names; ignored`);
  }
  if (r.mcp !== undefined) {
    const mcp = mcpField(r.mcp, warnings, `${where}: subagents.mcp`);
    if (mcp !== undefined) out.mcp = mcp;
  }
  Object.assign(out, mergeEngineSettings(out, r, where, userScope, warnings));
  mergeCapSettings(out, r, where, userScope, warnings);
  mergeHookSettings(out, r, where, userScope, warnings);
  mergeWorktreeSettings(out, r, where, userScope, warnings);
  return { settings: out, warnings };
}

function readSection(host: Host, file: string): { raw: unknown; warning?: string } {
  const text = host.readText(file);
  if (text === null) return { raw: undefined };
  try {
    const parsed = JSON.parse(text) as Record<string, unknown> | null;
    return { raw: parsed && typeof parsed === "object" ? parsed.subagents : undefined };
  } catch (err) {
    return {
      raw: undefined,
      warning: `${file}: not valid JSON (${(err as Error).message}); its subagents settings are ignored`,
    };
  }
}

export function loadSettings(
  host: Host,
  opts: { agentDir: string; cwd: string },
): { settings: Settings; warnings: string[] } {
  let settings = defaultSettings();
  const warnings: string[] = [];
  const files = [`${opts.agentDir}/settings.json`, `${opts.cwd}/.pi/settings.json`];
  for (const file of [...new Set(files)]) {
    const { raw, warning } = readSection(host, file);
    if (warning) warnings.push(warning);
    const merged = mergeSettings(settings, raw, file, file === files[0]);
    settings = merged.settings;
    warnings.push(...merged.warnings);
  }
  return { settings, warnings };
}
