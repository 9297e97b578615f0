// Agent definitions ("profiles"): markdown with YAML front matter, body = system prompt (DESIGN §3).
// Parsing never throws: a broken file becomes a reason string, so it never hides the other profiles.
import { parse as parseYaml } from "yaml";

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
  /** Allow list (pi names). */
  tools?: string[];
  /** Deny list (pi names). Never set together with `tools`. */
  excludeTools?: string[];
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
};

export type ProfileSource = Profile["source"];

/** Claude Code tool names → pi's, so `.claude/agents/*.md` files work unchanged. */
const CLAUDE_TOOLS: Record<string, string> = { Read: "read", Grep: "grep", Glob: "find", Bash: "bash", Edit: "edit", Write: "write", LS: "ls", MultiEdit: "edit" };
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
type Fields = Record<string, unknown>;

function splitFrontMatter(text: string): { yaml: string; body: string } {
  const src = text.replace(/^\uFEFF/, "");
  if (!/^---[ \t]*\r?\n/.test(src)) return { yaml: "", body: src };
  const m = /^---[ \t]*\r?\n([\s\S]*?)^---[ \t]*(?:\r?\n|$)/m.exec(src);
  if (!m) throw new Invalid('front matter starts with "---" but has no closing "---" line');
  return { yaml: m[1], body: src.slice(m[0].length) };
}

function readFields(yaml: string): Fields {
  if (!yaml.trim()) return {};
  let parsed: unknown;
  try {
    parsed = parseYaml(yaml);
  } catch (err) {
    throw new Invalid(`invalid YAML front matter: ${String((err as Error).message).split("\n")[0]}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed)) throw new Invalid("front matter must be a mapping of fields (key: value), not a list or a scalar");
  return parsed as Fields;
}

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

const mapTools = (tools: string[]) => [...new Set(tools.map((t) => CLAUDE_TOOLS[t] ?? t.toLowerCase()))];

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

function toolFields(fm: Fields): Pick<Profile, "tools" | "excludeTools" | "noTools" | "readonly"> {
  const allowKey = pick(fm, ["tools", "approved_tools", "allowed_tools"]);
  const denyKey = pick(fm, ["excludeTools", "denied_tools", "disallowedTools"]);
  const allow = list(fm, allowKey);
  const deny = list(fm, denyKey);
  if (allow && deny) throw new Invalid(`both an allow list (${allowKey}) and a deny list (${denyKey}): use one`);
  const noTools = bool(fm, "noTools");
  const readonly = bool(fm, "readonly");
  if (noTools && (allow || deny)) throw new Invalid(`"noTools: true" contradicts "${allowKey ?? denyKey}": use one`);
  // An empty allow list would silently mean "pi's default tools" downstream; make the intent explicit instead.
  if (allow && allow.length === 0) throw new Invalid(`field "${allowKey}" is empty: set "noTools: true" for no tools, or remove it for the default tools`);
  const out: Pick<Profile, "tools" | "excludeTools" | "noTools" | "readonly"> = {};
  if (noTools !== undefined) out.noTools = noTools;
  if (readonly !== undefined) out.readonly = readonly;
  if (allow) {
    out.tools = mapTools(allow);
    const writers = out.tools.filter((t) => WRITING_TOOLS.includes(t));
    if (readonly && writers.length) throw new Invalid(`"readonly: true" but "${allowKey}" includes ${writers.join(", ")}`);
  } else if (readonly && !noTools) {
    // Read-only narrows to the read tools; a deny list then removes from those.
    const denied = deny ? mapTools(deny) : [];
    out.tools = READONLY_TOOLS.filter((t) => !denied.includes(t));
  } else if (deny?.length) {
    out.excludeTools = mapTools(deny);
  }
  return out;
}

function thinkingField(fm: Fields): Thinking | undefined {
  const key = pick(fm, ["thinkingLevel", "thinking"]);
  const raw = str(fm, key)?.trim().toLowerCase();
  if (raw === undefined) return undefined;
  if (!(THINKING_LEVELS as readonly string[]).includes(raw)) throw new Invalid(`unknown thinking level "${raw}" in "${key}" (use one of: ${THINKING_LEVELS.join(", ")})`);
  return raw as Thinking;
}

function timeoutField(fm: Fields): number | undefined {
  if (!present(fm, "timeout")) return undefined;
  const v = fm.timeout;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) throw new Invalid(`field "timeout" must be a positive number of seconds (got ${kind(v)})`);
  return v;
}

function build(text: string, filePath: string, source: ProfileSource): Profile {
  const { yaml, body } = splitFrontMatter(text);
  const fm = readFields(yaml);
  const base = filePath.split(/[\\/]/).pop()!.replace(/\.md$/i, "");
  const name = (str(fm, "name") ?? base).trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
    throw new Invalid(`field "name" must be 1–64 letters, digits, "_", "-" or "." (got "${name}"${present(fm, "name") ? "" : ", taken from the file name"})`);
  }
  const tools = toolFields(fm);
  const thinking = thinkingField(fm);
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
  const systemPrompt = body.trim();
  if (!systemPrompt && mode === "replace") throw new Invalid('empty system prompt: write one below the front matter, or set "systemPromptMode: append"');

  const p: Profile = { name, source, systemPrompt, systemPromptMode: mode };
  if (source !== "builtin") p.filePath = filePath;
  const fields: Partial<Profile> = {
    description: str(fm, "description")?.trim(),
    provider: str(fm, "provider"),
    model: str(fm, "model"),
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
  };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) (p as Record<string, unknown>)[k] = v;
  return p;
}

/** The name a (possibly broken) profile file means to define: its `name:` line, else the file name. */
export function profileNameOf(text: string, filePath: string): string {
  const m = /^name:[ \t]*["']?([A-Za-z0-9][A-Za-z0-9_.-]{0,63})["']?[ \t]*$/m.exec(text);
  return m ? m[1] : filePath.split(/[\\/]/).pop()!.replace(/\.md$/i, "");
}

/** Parses one profile file. Never throws: `{ profile }` on success, `{ error }` with a reason naming the field otherwise. */
export function parseProfile(text: string, filePath: string, source: ProfileSource): { profile?: Profile; error?: string } {
  try {
    return { profile: build(text, filePath, source) };
  } catch (err) {
    if (err instanceof Invalid) return { error: err.message };
    return { error: `could not be parsed: ${(err as Error)?.message ?? String(err)}` };
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
  ].filter(Boolean);
  const head = [p.name, p.description ? preview(p.description, 100) : ""].filter(Boolean).join(" — ");
  const prompt = p.systemPrompt ? ` — prompt: "${preview(p.systemPrompt, 60)}"` : "";
  return `${head} (${[model, tools, ...settings].join("; ")})${prompt}`;
}
