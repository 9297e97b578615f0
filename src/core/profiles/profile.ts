// Agent definitions ("profiles"): markdown with YAML front matter, body = system prompt (DESIGN §3).
// Parsing never throws: a broken file becomes a reason string, so it never hides the other profiles.
// Files written for Claude Code load as their authors meant them (claude-compat.ts); what cannot be honoured
// becomes a warning on the profile, never a failure.
import { RUNTIME_NAMES, type RuntimeName } from "../runtime-names.ts";
import { outputSchemaProblem } from "../output-schema.ts";
import { EFFORT_TO_THINKING, mapTools, normalizeFields, QUIET_FIELDS, UNSUPPORTED_FIELDS } from "./claude-compat.ts";
import { FrontMatterError, readFrontMatter, splitFrontMatter, type Fields } from "./front-matter.ts";
import { isIsolationMode, type IsolationMode } from "../isolation-types.ts";
import { BUDGET_KEYS, budgetLimits, budgetValue, type BudgetKey } from "../budget.ts";
import { mcpField, type McpChoice } from "../mcp-choice.ts";
import { ENGINE_FIELDS, engineFields } from "./engine-fields.ts";
import type { RunnerName } from "../engine-settings.ts";
import { adaptFields, type Adapted } from "./harness-fields.ts";
import { AgentFileError, readCodexToml } from "./agent-file-formats.ts";
import type { FileKind, Harness } from "./harnesses.ts";

export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;
export type Thinking = (typeof THINKING_LEVELS)[number];

export type Profile = {
  name: string;
  description?: string;
  source: "builtin" | "user" | "project";
  filePath?: string;
  provider?: string;
  model?: string;
  thinking?: Thinking;
  /** Allow list (pi names); already minus the deny list when the file had both. May be empty (only finalize). */
  tools?: string[];
  /** Deny list (pi names). Never set together with `tools`. */
  excludeTools?: string[];
  /** Tools the file lists that do not exist here (Claude Code's WebFetch, Task, mcp__…): the child is told. */
  unavailableTools?: string[];
  noTools?: boolean;
  extensions?: string[];
  noExtensions?: boolean;
  noSkills?: boolean;
  suggestedSkills?: string[];
  loadSkills?: string[];
  noContextFiles?: boolean;
  /** The markdown body, trimmed. */
  systemPrompt: string;
  systemPromptMode: "replace" | "append";
  appendSystemPrompt?: string;
  apiKey?: string;
  extraArgs?: string[];
  readonly?: boolean;
  /** Seconds. */
  timeout?: number;
  finalize?: boolean;
  /** Budgets (budget.ts); maxTurns is also Claude Code's turn budget. */
  maxTurns?: number;
  /** Run in a git worktree (Claude Code's `isolation: worktree`). */
  isolation?: IsolationMode;
  maxTokens?: number;
  maxCost?: number;
  /** Models to continue on, in order, when the task's model fails (fallback.ts). */
  fallbackModels?: string[];
  /** Claude Code's display colour, as written. */
  color?: string;
  /** Acceptance gate (run/gate.ts): a shell command that must pass before the task counts as completed. */
  gate?: string;
  gateTimeout?: number;
  gateRetries?: number;
  /** Structured result (output-schema.ts): a JSON Schema the child's finalize `data` must match (also oh-my-pi's `output`). */
  outputSchema?: Record<string, unknown>;
  /** `fork`: start from a copy of the parent pi session's conversation (run/fork.ts); `fresh` (default): a new one. */
  context?: "fork" | "fresh";
  /** MCP servers the child may start (pi 1.x): all, none (`false`), or only the named ones. */
  mcp?: McpChoice;
  /** Run sandboxed, and where (src/core/run/runners/). */
  sandbox?: boolean;
  runner?: RunnerName;
  /** What loaded with a compromise: tolerant front matter, unsupported fields, unmapped tools, … */
  warnings?: string[];
  /** Whose agent file this is (harnesses.ts): pi, claude-code, codex, cursor, opencode, gemini, qwen, copilot, omp. */
  harness?: Harness;
  /** Which CLI runs the child (src/core/run/runtimes/): pi, or another harness's headless CLI. */
  runtime?: RuntimeName;
  /** Claude Code's `memory`: a MEMORY.md the child starts with (agent-memory.ts). */
  memory?: MemoryScope;
  /** Inline MCP server definitions from the file (Codex, Gemini, Copilot); recorded, not started yet. */
  mcpServers?: Record<string, unknown>;
};

export const MEMORY_SCOPES = ["user", "project", "local"] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];
/** Runtimes a file may name (src/core/run/runtimes/); "claude" is taken for "claude-code". */
const RUNTIME_ALIASES: Record<string, RuntimeName> = { claude: "claude-code" };

export type ProfileSource = Profile["source"];

export const READONLY_TOOLS = ["read", "grep", "find", "ls"];
const WRITING_TOOLS = ["edit", "write"];
const TOOL_OVERRIDE_FLAGS = ["--tools", "-t", "--no-tools", "-nt"];
/** Flags that would break how we drive a child: its session, output mode, key handling, or make pi exit early. */
const CONTRACT_FLAGS = [
  "--session", "--session-dir", "--no-session", "--fork", "--continue", "-c", "--resume", "-r",
  "--mode", "-p", "--print", "--api-key", "--export", "--list-models", "--help", "-h", "--version", "-v",
];

/** Thrown only inside this module; parseProfile turns it into `{ error }`. */
class Invalid extends Error {}
/** A file its own harness would not run (disabled, a remote agent): skipped like a document, not an error. */
class NotAnAgent extends Error {}

const present = (fm: Fields, key: string) => fm[key] !== undefined && fm[key] !== null;

/** The one alias of a field that is set; setting two spellings of the same field is ambiguous. */
function pick(fm: Fields, keys: string[]): string | undefined {
  const set = keys.filter((k) => present(fm, k));
  if (set.length > 1) throw new Invalid(`fields ${set.map((k) => `"${k}"`).join(" and ")} mean the same thing: use one`);
  return set[0];
}

function str(fm: Fields, key: string | undefined): string | undefined {
  if (key === undefined || !present(fm, key)) return undefined;
  const v = fm[key];
  if (typeof v === "number") return String(v);
  if (typeof v !== "string") throw new Invalid(`field "${key}" must be a string (got ${kind(v)})`);
  return v;
}

function bool(fm: Fields, key: string): boolean | undefined {
  if (!present(fm, key)) return undefined;
  const v = fm[key];
  if (typeof v !== "boolean") throw new Invalid(`field "${key}" must be true or false (got ${kind(v)})`);
  return v;
}

/** A YAML list of strings or a comma-separated string. */
function list(fm: Fields, key: string | undefined): string[] | undefined {
  if (key === undefined || !present(fm, key)) return undefined;
  const v = fm[key];
  const items = typeof v === "string" ? v.split(",") : Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : null;
  if (!items) throw new Invalid(`field "${key}" must be a list of strings or a comma-separated string (got ${kind(v)})`);
  return items.map((s) => s.trim()).filter(Boolean);
}

/** extraArgs: a YAML list (numbers allowed), or one string split on whitespace — commas are common inside argument values. */
function argList(fm: Fields): string[] | undefined {
  if (!present(fm, "extraArgs")) return undefined;
  const v = fm.extraArgs;
  if (typeof v === "string") return v.split(/\s+/).filter(Boolean);
  if (Array.isArray(v) && v.every((x) => typeof x === "string" || typeof x === "number")) return v.map(String);
  throw new Invalid(`field "extraArgs" must be a list of strings (got ${kind(v)})`);
}

function kind(v: unknown): string {
  if (Array.isArray(v)) return "a list";
  if (v === null) return "null";
  if (typeof v === "object") return "a mapping";
  return `${typeof v} ${JSON.stringify(v)}`;
}


/** Spec 000's guard plus flags that would break the child contract. Returns a reason, or null. */
export function extraArgsProblem(args: string[], restrictsTools: boolean): string | null {
  for (const arg of args) {
    const flag = arg.split("=")[0];
    if (restrictsTools && TOOL_OVERRIDE_FLAGS.includes(flag)) {
      return `Refusing extraArg "${arg}" which would override profile tool restrictions. Use the dedicated profile fields instead.`;
    }
    if (CONTRACT_FLAGS.includes(flag)) {
      const hint = flag === "--api-key" ? ' (use the "apiKey" field)' : "";
      return `Refusing extraArg "${arg}": sub-agents set ${flag} themselves, so it would break how the child is run${hint}.`;
    }
  }
  return null;
}

type ToolFields = Pick<Profile, "tools" | "excludeTools" | "noTools" | "readonly" | "unavailableTools">;

function toolFields(fm: Fields, warnings: string[], mappedAway = 0): ToolFields {
  const allowKey = pick(fm, ["tools", "approved_tools", "allowed_tools"]);
  const denyKey = pick(fm, ["excludeTools", "denied_tools", "disallowedTools"]);
  let allow = list(fm, allowKey);
  const deny = list(fm, denyKey);
  // "all tools" spellings of the ecosystem mean: no allow list; "none" means none.
  const only = allow?.length === 1 ? allow[0].toLowerCase() : undefined;
  if (only === "*" || only === "all" || only === "inherit") allow = undefined;
  if (only === "none") allow = [];
  const noTools = bool(fm, "noTools");
  const readonly = bool(fm, "readonly");
  if (noTools && (allow || deny)) throw new Invalid(`"noTools: true" contradicts "${allowKey ?? denyKey}": use one`);
  // An empty allow list means what it says (Claude Code reads `tools: []` the same way): no tools at all.
  if (allow && allow.length === 0 && only !== "none" && !mappedAway) warnings.push(`"${allowKey}" is empty: the agent runs without tools`);
  const out: ToolFields = {};
  if (noTools !== undefined) out.noTools = noTools;
  if (readonly !== undefined) out.readonly = readonly;
  const mappedAllow = allow ? mapTools(allow) : null;
  const mappedDeny = deny ? mapTools(deny) : null;
  warnings.push(...(mappedAllow?.notes ?? []));
  if (mappedAllow?.unavailable.length) {
    out.unavailableTools = mappedAllow.unavailable;
    warnings.push(`tools not available here: ${mappedAllow.unavailable.join(", ")}`);
  }
  const denied = mappedDeny?.tools ?? [];
  if (mappedAllow) {
    // Claude Code's rule: the deny list is removed from the allow list.
    out.tools = mappedAllow.tools.filter((t) => !denied.includes(t));
    const writers = out.tools.filter((t) => WRITING_TOOLS.includes(t));
    if (readonly && writers.length) throw new Invalid(`"readonly: true" but "${allowKey}" includes ${writers.join(", ")}`);
    if (!out.tools.length && allow!.length) warnings.push("none of the listed tools exist here: the agent runs without tools");
  } else if (readonly && !noTools) {
    // Read-only narrows to the read tools; a deny list then removes from those.
    out.tools = READONLY_TOOLS.filter((t) => !denied.includes(t));
  } else if (denied.length) {
    out.excludeTools = denied;
  }
  return out;
}

function thinkingField(fm: Fields, warnings: string[]): Thinking | undefined {
  const key = pick(fm, ["thinkingLevel", "thinking"]);
  const raw = str(fm, key)?.trim().toLowerCase();
  if (raw === undefined) {
    // Claude Code's `effort` is the same idea; an unknown value there is the author's tool's business, not an error.
    const effort = present(fm, "effort") ? String(fm.effort).trim().toLowerCase() : undefined;
    if (effort === undefined) return undefined;
    const mapped = EFFORT_TO_THINKING[effort];
    if (!mapped) warnings.push(`effort "${effort}" has no thinking level here (ignored)`);
    return mapped as Thinking | undefined;
  }
  if (!(THINKING_LEVELS as readonly string[]).includes(raw)) throw new Invalid(`unknown thinking level "${raw}" in "${key}" (use one of: ${THINKING_LEVELS.join(", ")})`);
  return raw as Thinking;
}

/** A budget field (maxTurns, maxTokens, maxCost): a positive number; anything else is reported and ignored. */
function budgetField(fm: Fields, key: BudgetKey, warnings: string[]): number | undefined {
  if (!present(fm, key)) return undefined;
  const v = budgetValue(key, fm[key]);
  if (typeof v === "number") return v;
  warnings.push(`${v}; ignored`);
  return undefined;
}

/** isolation: "worktree" (the only mode); anything else is reported and ignored. */
function isolationField(fm: Fields, warnings: string[]): IsolationMode | undefined {
  if (!present(fm, "isolation")) return undefined;
  const v = typeof fm.isolation === "string" ? fm.isolation.trim() : fm.isolation;
  if (isIsolationMode(v)) return v;
  warnings.push(`isolation must be "worktree" (got ${kind(fm.isolation)}; ignored)`);
  return undefined;
}

/** Every field this loader reads; anything else is reported as not supported here. */
const HANDLED_FIELDS = new Set([
  "name", "description", "provider", "model", "thinkingLevel", "thinking", "effort", "tools", "approved_tools", "allowed_tools",
  "excludeTools", "denied_tools", "disallowedTools", "noTools", "extensions", "noExtensions", "noSkills", "suggestedSkills",
  "loadSkills", "skills", "noContextFiles", "systemPromptMode", "appendSystemPrompt", "apiKey", "extraArgs", "readonly",
  "timeout", "finalize", "maxTurns", "maxTokens", "maxCost", "fallbackModels", "isolation", "color", "gate", "gateTimeout", "gateRetries", "outputSchema", "context", "mcp", "memory", "runtime", ...QUIET_FIELDS, ...ENGINE_FIELDS,
]);

function unsupportedFields(fm: Fields): string | null {
  const keys = Object.keys(fm).filter((k) => !HANDLED_FIELDS.has(k));
  if (!keys.length) return null;
  const claude = keys.filter((k) => UNSUPPORTED_FIELDS.includes(k));
  const other = keys.filter((k) => !UNSUPPORTED_FIELDS.includes(k));
  return `not supported here (ignored): ${[...claude, ...other].join(", ")}`;
}

const validName = (n: string) => /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(n);

/** "Python Security Expert" → "python-security-expert": how a display-style name becomes a usable one. */
export function nameSlug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9_.]+/g, "-").replace(/^[-_.]+|-+$/g, "").slice(0, 64);
}

/** A profile by its name, or by the display-style name it was made from ("Python Security Expert"). */
export function findProfile(profiles: Map<string, Profile>, name: string): Profile | undefined {
  return profiles.get(name) ?? profiles.get(nameSlug(name));
}

/** `name` (a display-style one made usable, said in a warning), else the file name. */
function nameField(fm: Fields, filePath: string, warnings: string[]): string {
  const base = baseName(filePath);
  const written = str(fm, "name")?.trim();
  if (written !== undefined && validName(written)) return written;
  const slug = written !== undefined ? nameSlug(written) : "";
  if (slug && validName(slug)) {
    warnings.push(`name "${written}" is used as "${slug}" (names are letters, digits, "_", "-", ".")`);
    return slug;
  }
  if (!validName(base)) {
    throw new Invalid(`field "name" must be 1–64 letters, digits, "_", "-" or "." (got "${written ?? base}"${written !== undefined ? "" : ", taken from the file name"})`);
  }
  if (written !== undefined) warnings.push(`name "${written}" is not a usable name (letters, digits, "_", "-", "."): using the file name "${base}"`);
  return base;
}

/** `gate` (a shell command), `gateTimeout` (seconds), `gateRetries` (corrections before GATE_FAILED). */
function gateFields(fm: Fields): Partial<Profile> {
  const out: Partial<Profile> = {};
  if (present(fm, "gate")) {
    if (typeof fm.gate !== "string" || !fm.gate.trim()) throw new Invalid(`field "gate" must be a shell command (got ${kind(fm.gate)})`);
    out.gate = fm.gate;
  }
  if (present(fm, "gateTimeout")) {
    const v = fm.gateTimeout;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) throw new Invalid(`field "gateTimeout" must be a positive number of seconds (got ${kind(v)})`);
    out.gateTimeout = v;
  }
  if (present(fm, "outputSchema")) {
    let schema = fm.outputSchema;
    // Written as a JSON string (or read line by line from non-strict front matter): parse it.
    if (typeof schema === "string") {
      try {
        schema = JSON.parse(schema);
      } catch {
        throw new Invalid('field "outputSchema" must be a JSON Schema (a YAML mapping, or JSON text)');
      }
    }
    const problem = outputSchemaProblem('field "outputSchema"', schema);
    if (problem) throw new Invalid(problem);
    out.outputSchema = schema as Record<string, unknown>;
  }
  if (present(fm, "context")) {
    if (fm.context !== "fork" && fm.context !== "fresh") throw new Invalid(`field "context" must be "fork" or "fresh" (got ${kind(fm.context)})`);
    out.context = fm.context;
  }
  if (present(fm, "gateRetries")) {
    const v = fm.gateRetries;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new Invalid(`field "gateRetries" must be a whole number ≥ 0 (got ${kind(v)})`);
    out.gateRetries = v;
  }
  return out;
}

function timeoutField(fm: Fields): number | undefined {
  if (!present(fm, "timeout")) return undefined;
  const v = fm.timeout;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) throw new Invalid(`field "timeout" must be a positive number of seconds (got ${kind(v)})`);
  return v;
}

/** memory: user | project | local; another value is reported and ignored. */
function memoryField(fm: Fields, warnings: string[]): MemoryScope | undefined {
  if (!present(fm, "memory")) return undefined;
  const v = typeof fm.memory === "string" ? fm.memory.trim().toLowerCase() : fm.memory;
  if ((MEMORY_SCOPES as readonly unknown[]).includes(v)) return v as MemoryScope;
  warnings.push(`memory must be "user", "project" or "local" (got ${kind(fm.memory)}; ignored)`);
  return undefined;
}

/** runtime: which CLI runs the child; an unknown one is refused (not silently run on pi). */
function runtimeField(fm: Fields): RuntimeName | undefined {
  if (!present(fm, "runtime")) return undefined;
  const v = typeof fm.runtime === "string" ? fm.runtime.trim().toLowerCase() : fm.runtime;
  const name = typeof v === "string" ? (RUNTIME_ALIASES[v] ?? v) : v;
  if ((RUNTIME_NAMES as readonly unknown[]).includes(name)) return name as RuntimeName;
  throw new Invalid(`field "runtime" must be one of ${RUNTIME_NAMES.join(", ")} (got ${kind(fm.runtime)})`);
}

/** The file's text as fields + body, for its kind (markdown front matter or Codex TOML). */
function readAgentText(text: string, kind: FileKind): { fields: Fields; body: string; lenient?: string } {
  if (kind === "toml") return readCodexToml(text);
  return readFrontMatter(text);
}

function build(text: string, filePath: string, source: ProfileSource, harness: Harness = "pi", kindOf: FileKind = "md"): Profile {
  return buildFrom(readAgentText(text, kindOf), filePath, source, harness);
}

/** A profile from fields already read (front matter, TOML, or an opencode.json entry). */
function buildFrom(read: { fields: Fields; body: string; lenient?: string }, filePath: string, source: ProfileSource, harness: Harness): Profile {
  const adapted: Adapted = adaptFields(harness, read.fields, read.body);
  if (adapted.skip) throw new NotAnAgent(adapted.skip);
  const fm = normalizeFields(adapted.fields);
  const warnings: string[] = [...adapted.warnings];
  if (read.lenient) warnings.push(`front matter is not strict YAML (${read.lenient}); read line by line — quote values containing ": " to silence this`);
  const name = nameField(fm, filePath, warnings);
  const tools = toolFields(fm, warnings, adapted.unavailable.length);
  if (adapted.unavailable.length) {
    tools.unavailableTools = [...(tools.unavailableTools ?? []), ...adapted.unavailable.filter((t) => !tools.unavailableTools?.includes(t))];
    const i = warnings.findIndex((w) => w.startsWith("tools not available here:"));
    const line = `tools not available here: ${tools.unavailableTools.join(", ")}`;
    if (i >= 0) warnings[i] = line;
    else warnings.push(line);
  }
  const thinking = thinkingField(fm, warnings);
  const timeout = timeoutField(fm);
  const mode = str(fm, "systemPromptMode") ?? "replace";
  if (mode !== "replace" && mode !== "append") throw new Invalid(`field "systemPromptMode" must be "replace" or "append" (got "${mode}")`);
  const apiKey = str(fm, "apiKey");
  if (apiKey !== undefined && source === "project") throw new Invalid('project profiles cannot set "apiKey" (a repository must not choose your credentials; put it in a user profile)');
  const extraArgs = argList(fm);
  if (extraArgs) {
    const problem = extraArgsProblem(extraArgs, !!(tools.tools || tools.excludeTools || tools.noTools));
    if (problem) throw new Invalid(problem);
  }
  const systemPrompt = adapted.body.trim();
  if (!systemPrompt && mode === "replace") {
    if (harness === "codex") throw new Invalid('empty system prompt: set "developer_instructions"');
    throw new Invalid('empty system prompt: write one below the front matter, or set "systemPromptMode: append"');
  }
  const [maxTurns, maxTokens, maxCost] = BUDGET_KEYS.map((k) => budgetField(fm, k, warnings));
  const isolation = isolationField(fm, warnings);
  const mcp = mcpField(fm.mcp, warnings);
  const where = engineFields(fm, warnings);
  const memory = memoryField(fm, warnings);
  const runtime = runtimeField(fm);
  const unsupported = unsupportedFields(fm);
  if (unsupported) warnings.push(unsupported);

  const p: Profile = { name, source, systemPrompt, systemPromptMode: mode };
  if (warnings.length) p.warnings = warnings;
  if (source !== "builtin") {
    p.filePath = filePath;
    p.harness = harness;
  }
  const fields: Partial<Profile> = {
    description: str(fm, "description")?.trim(),
    provider: str(fm, "provider"),
    model: str(fm, "model")?.trim(),
    thinking,
    ...tools,
    extensions: list(fm, "extensions"),
    noExtensions: bool(fm, "noExtensions"),
    noSkills: bool(fm, "noSkills"),
    suggestedSkills: list(fm, "suggestedSkills"),
    loadSkills: list(fm, pick(fm, ["loadSkills", "skills"])),
    noContextFiles: bool(fm, "noContextFiles"),
    appendSystemPrompt: str(fm, "appendSystemPrompt"),
    apiKey,
    extraArgs,
    timeout,
    finalize: bool(fm, "finalize"),
    maxTurns,
    isolation,
    maxTokens,
    maxCost,
    fallbackModels: list(fm, "fallbackModels"),
    color: typeof fm.color === "string" ? fm.color.trim() : undefined,
    mcp,
    ...where,
    runtime,
    memory,
    mcpServers: adapted.mcpServers,
    // oh-my-pi's `output` is checked like our own field; ours (read by gateFields) wins when both are there.
    outputSchema: adapted.outputSchema && !outputSchemaProblem('field "output"', adapted.outputSchema) ? adapted.outputSchema : undefined,
    ...gateFields(fm),
  };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) (p as Record<string, unknown>)[k] = v;
  return p;
}

/**
 * Whether a file may be an agent definition: front matter with a `description` key. A line test, not a parse:
 * discovery asks this of every .md in a collection on each delegate call. Why a file is not one, or null.
 */
export function notAgentReason(text: string): string | null {
  let yaml: string | null;
  try {
    yaml = splitFrontMatter(text).yaml;
  } catch {
    return null; // starts with "---" but cannot be split: meant as an agent, so its error shows
  }
  if (yaml === null) return "no front matter";
  if (/^(?:enabled[ \t]*:[ \t]*false|disabled[ \t]*:[ \t]*true)[ \t]*$/m.test(yaml)) return "disabled in its front matter";
  return /^["']?description["']?[ \t]*:/m.test(yaml) ? null : "no description in its front matter";
}

/** The name a (possibly broken) profile file means to define: its `name:` line, else the file name. */
export function profileNameOf(text: string, filePath: string): string {
  // `name: x` (front matter) or `name = "x"` (Codex TOML)
  const m = /^name[ \t]*[:=][ \t]*["']?([A-Za-z0-9][A-Za-z0-9_.-]{0,63})["']?[ \t]*$/m.exec(text);
  return m ? m[1] : baseName(filePath);
}

/** The agent name a file name gives: `x.md`, Copilot's `x.agent.md`, Codex's `x.toml` → `x`. */
function baseName(filePath: string): string {
  return filePath.split(/[\\/]/).pop()!.replace(/(?:\.agent)?\.md$|\.toml$/i, "");
}

/** Parses one profile file. Never throws: `{ profile }` on success, `{ error }` with a reason naming the field otherwise. */
export function parseProfile(text: string, filePath: string, source: ProfileSource, harness: Harness = "pi", kindOf: FileKind = "md"): { profile?: Profile; error?: string; skip?: string } {
  try {
    return { profile: build(text, filePath, source, harness, kindOf) };
  } catch (err) {
    return failure(err, kindOf === "md" ? text : null);
  }
}

/** parseProfile for fields read elsewhere (an opencode.json entry). */
export function parseProfileFields(read: { fields: Fields; body: string }, filePath: string, source: ProfileSource, harness: Harness): { profile?: Profile; error?: string; skip?: string } {
  try {
    return { profile: buildFrom(read, filePath, source, harness) };
  } catch (err) {
    return failure(err, null);
  }
}

function failure(err: unknown, mdText: string | null): { error?: string; skip?: string } {
  if (err instanceof NotAnAgent) return { skip: err.message };
  if (err instanceof Invalid || err instanceof FrontMatterError) return { error: mdText === null ? err.message : withYamlNote(mdText, err.message) };
  if (err instanceof AgentFileError) return { error: err.message };
  return { error: `could not be parsed: ${(err as Error)?.message ?? String(err)}` };
}

/** When a file was read leniently and still failed, say that its YAML was broken too: that is often the cause. */
function withYamlNote(text: string, message: string): string {
  try {
    const why = readFrontMatter(text).lenient;
    return why ? `${message} (its front matter is also invalid YAML: ${why})` : message;
  } catch {
    return message;
  }
}

/** Spec 000's skill conflicts (the whole delegate call fails on them). */
export function validateProfileSkills(p: Profile): string | null {
  if (p.noSkills && p.suggestedSkills?.length) {
    return `Profile "${p.name}" has both "suggestedSkills" and "noSkills" set. These are mutually exclusive — --no-skills would override --skill flags.`;
  }
  if (p.noSkills && p.loadSkills?.length) {
    return `Profile "${p.name}" has both "loadSkills" and "noSkills" set. These are mutually exclusive — --no-skills disables skill discovery.`;
  }
  return null;
}

function preview(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** One line for list_subagent_profiles and `subagents profiles`: name, model, tools, key settings, prompt preview. */
export function profileSummary(p: Profile): string {
  const model = p.model ? (p.provider && !p.model.includes("/") ? `${p.provider}/${p.model}` : p.model) : p.provider ? `${p.provider}/default` : "default model";
  const tools = p.noTools ? "no tools" : p.tools ? `tools: ${p.tools.join(",")}` : p.excludeTools ? `all tools except ${p.excludeTools.join(",")}` : "default tools";
  const settings = [
    p.thinking ? `thinking ${p.thinking}` : "",
    p.readonly ? "read-only" : "",
    p.timeout ? `timeout ${p.timeout}s` : "",
    p.loadSkills?.length ? `skills: ${p.loadSkills.join(",")}` : "",
    p.suggestedSkills?.length ? `suggested skills: ${p.suggestedSkills.join(",")}` : "",
    p.noSkills ? "no skills" : "",
    p.extensions?.length ? `extensions: ${p.extensions.length}` : "",
    p.noExtensions ? "no extensions" : "",
    p.noContextFiles ? "no context files" : "",
    p.systemPromptMode === "append" ? "appends to pi's prompt" : "",
    p.apiKey ? "own API key" : "",
    p.extraArgs?.length ? `extra args: ${p.extraArgs.length}` : "",
    p.finalize === false ? "no finalize" : "",
    p.unavailableTools?.length ? `not available here: ${p.unavailableTools.join(",")}` : "",
    budgetLimits(p),
    p.isolation ? `isolation ${p.isolation}` : "",
    p.memory ? `memory: ${p.memory}` : "",
    p.fallbackModels?.length ? `fallback: ${p.fallbackModels.join(",")}` : "",
    p.mcp === false ? "no MCP servers" : Array.isArray(p.mcp) ? `MCP: ${p.mcp.join(",") || "none"}` : "",
  ].filter(Boolean);
  const head = [p.name, p.description ? preview(p.description, 100) : ""].filter(Boolean).join(" — ");
  const prompt = p.systemPrompt ? ` — prompt: "${preview(p.systemPrompt, 60)}"` : "";
  return `${head} (${[model, tools, ...settings].join("; ")})${prompt}`;
}
