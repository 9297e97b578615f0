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
  tools?: string[];
  excludeTools?: string[];
  noTools?: boolean;
  extensions?: string[];
  noExtensions?: boolean;
  noSkills?: boolean;
  suggestedSkills?: string[];
  loadSkills?: string[];
  noContextFiles?: boolean;
  systemPrompt: string;
  systemPromptMode: "replace" | "append";
  appendSystemPrompt?: string;
  apiKey?: string;
  extraArgs?: string[];
  readonly?: boolean;
  timeout?: number;
  finalize?: boolean;
};

/** Claude Code tool names → pi's. */
const CLAUDE_TOOLS: Record<string, string> = { Read: "read", Grep: "grep", Glob: "find", Bash: "bash", Edit: "edit", Write: "write", LS: "ls", MultiEdit: "edit" };
export const READONLY_TOOLS = ["read", "grep", "find", "ls"];
const TOOL_OVERRIDE_FLAGS = ["--tools", "-t", "--no-tools", "-nt"];
const CONTRACT_FLAGS = ["--session", "--session-dir", "--mode", "-p", "--print", "--api-key", "--no-session", "--fork"];

class Invalid extends Error {}

function splitFrontMatter(text: string): { yaml: string; body: string } {
  const src = text.replace(/^\uFEFF/, "");
  const m = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(src);
  if (!m) return { yaml: "", body: src };
  return { yaml: m[1], body: src.slice(m[0].length) };
}

function list(fm: Record<string, unknown>, keys: string[]): { key: string; value: string[] } | undefined {
  const key = keys.find((k) => fm[k] !== undefined && fm[k] !== null);
  if (!key) return undefined;
  const v = fm[key];
  if (typeof v === "string") return { key, value: v.split(",").map((s) => s.trim()).filter(Boolean) };
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return { key, value: (v as string[]).map((s) => s.trim()).filter(Boolean) };
  throw new Invalid(`field "${key}" must be a list of strings or a comma-separated string`);
}

function str(fm: Record<string, unknown>, key: string): string | undefined {
  const v = fm[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "number") return String(v);
  if (typeof v !== "string") throw new Invalid(`field "${key}" must be a string`);
  return v;
}

function bool(fm: Record<string, unknown>, key: string): boolean | undefined {
  const v = fm[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw new Invalid(`field "${key}" must be true or false`);
  return v;
}

const mapTools = (tools: string[]) => [...new Set(tools.map((t) => CLAUDE_TOOLS[t] ?? t.toLowerCase()))];

function flagName(arg: string): string {
  return arg.split("=")[0];
}

/** The spec-000 guard plus flags that would break the child contract. Returns a reason, or null. */
export function extraArgsProblem(args: string[], restrictsTools: boolean): string | null {
  for (const arg of args) {
    const flag = flagName(arg);
    if (restrictsTools && TOOL_OVERRIDE_FLAGS.includes(flag)) {
      return `Refusing extraArg "${arg}" which would override profile tool restrictions. Use the dedicated profile fields instead.`;
    }
    if (CONTRACT_FLAGS.includes(flag)) return `Refusing extraArg "${arg}": sub-agents manage ${flag} themselves.`;
  }
  return null;
}

function build(text: string, filePath: string, source: Profile["source"]): Profile {
  const { yaml, body } = splitFrontMatter(text);
  let fm: Record<string, unknown> = {};
  if (yaml.trim()) {
    let parsed: unknown;
    try {
      parsed = parseYaml(yaml);
    } catch (err) {
      throw new Invalid(`invalid YAML front matter: ${(err as Error).message.split("\n")[0]}`);
    }
    if (parsed !== null && (typeof parsed !== "object" || Array.isArray(parsed))) throw new Invalid("front matter must be a mapping of fields");
    fm = (parsed ?? {}) as Record<string, unknown>;
  }
  const base = filePath.split("/").pop()!.replace(/\.md$/i, "");
  const name = str(fm, "name") ?? base;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) throw new Invalid(`field "name" must be letters, digits, '_', '-', '.' (got "${name}")`);
  const allow = list(fm, ["tools", "approved_tools", "allowed_tools"]);
  const deny = list(fm, ["excludeTools", "denied_tools", "disallowedTools"]);
  if (allow && deny) throw new Invalid(`both an allow list (${allow.key}) and a deny list (${deny.key}): use one`);
  const thinkingRaw = str(fm, "thinkingLevel") ?? str(fm, "thinking");
  if (thinkingRaw !== undefined && !(THINKING_LEVELS as readonly string[]).includes(thinkingRaw)) {
    throw new Invalid(`unknown thinking level "${thinkingRaw}" (use ${THINKING_LEVELS.join(", ")})`);
  }
  let timeout: number | undefined;
  if (fm.timeout !== undefined && fm.timeout !== null) {
    if (typeof fm.timeout !== "number" || !(fm.timeout > 0)) throw new Invalid(`field "timeout" must be a positive number of seconds`);
    timeout = fm.timeout;
  }
  const mode = str(fm, "systemPromptMode") ?? "replace";
  if (mode !== "replace" && mode !== "append") throw new Invalid(`field "systemPromptMode" must be "replace" or "append"`);
  const apiKey = str(fm, "apiKey");
  if (apiKey !== undefined && source === "project") throw new Invalid(`project profiles cannot set "apiKey" (put it in a user profile or pi's own config)`);
  const readonly = bool(fm, "readonly");
  const noTools = bool(fm, "noTools");
  const tools = allow ? mapTools(allow.value) : readonly && !deny ? [...READONLY_TOOLS] : undefined;
  const extraArgs = list(fm, ["extraArgs"])?.value;
  if (extraArgs) {
    const problem = extraArgsProblem(extraArgs, !!(tools || deny || noTools));
    if (problem) throw new Invalid(problem);
  }
  const systemPrompt = body.trim();
  if (!systemPrompt && mode === "replace") throw new Invalid("empty system prompt (write one below the front matter, or set systemPromptMode: append)");
  const p: Profile = { name, source, filePath: source === "builtin" ? undefined : filePath, systemPrompt, systemPromptMode: mode };
  const set = <K extends keyof Profile>(k: K, v: Profile[K] | undefined) => {
    if (v !== undefined) p[k] = v;
  };
  set("description", str(fm, "description"));
  set("provider", str(fm, "provider"));
  set("model", str(fm, "model"));
  set("thinking", thinkingRaw as Thinking | undefined);
  set("tools", tools);
  set("excludeTools", deny ? mapTools(deny.value) : undefined);
  set("noTools", noTools);
  set("extensions", list(fm, ["extensions"])?.value);
  set("noExtensions", bool(fm, "noExtensions"));
  set("noSkills", bool(fm, "noSkills"));
  set("suggestedSkills", list(fm, ["suggestedSkills"])?.value);
  set("loadSkills", list(fm, ["loadSkills", "skills"])?.value);
  set("noContextFiles", bool(fm, "noContextFiles"));
  set("appendSystemPrompt", str(fm, "appendSystemPrompt"));
  set("apiKey", apiKey);
  set("extraArgs", extraArgs);
  set("readonly", readonly);
  set("timeout", timeout);
  set("finalize", bool(fm, "finalize"));
  return p;
}

export function parseProfile(text: string, filePath: string, source: Profile["source"]): { profile?: Profile; error?: string } {
  try {
    return { profile: build(text, filePath, source) };
  } catch (err) {
    if (err instanceof Invalid) return { error: err.message };
    return { error: `could not be parsed: ${(err as Error).message}` };
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

export function profileSummary(p: Profile): string {
  const model = p.model ? (p.provider && !p.model.includes("/") ? `${p.provider}/${p.model}` : p.model) : p.provider ? `${p.provider}/default` : "default model";
  const tools = p.noTools ? "no tools" : p.tools ? `tools: ${p.tools.join(",")}` : p.excludeTools ? `all tools except ${p.excludeTools.join(",")}` : "default tools";
  const preview = (p.description ?? p.systemPrompt).replace(/\s+/g, " ").trim();
  const short = preview.length > 60 ? `${preview.slice(0, 59)}…` : preview;
  const extras = [p.thinking ? `thinking ${p.thinking}` : "", p.timeout ? `timeout ${p.timeout}s` : "", p.finalize === false ? "no finalize" : ""].filter(Boolean);
  return `${p.name} — ${model}; ${tools}${extras.length ? `; ${extras.join(", ")}` : ""} — ${short}`;
}
