// Agent definitions ("profiles"): markdown with YAML front matter, body = system prompt (docs/agents.md).
// Parsing never throws: a broken file becomes a reason string, so it never hides the other profiles.
// Files written for Claude Code load as their authors meant them (claude-compat.ts); what cannot be honoured
// becomes a warning on the profile, never a failure.
import { outputSchemaProblem } from "../output-schema.ts";
import { normalizeFields } from "./claude-compat.ts";
import { FrontMatterError, readFrontMatter, splitFrontMatter, type Fields } from "./front-matter.ts";
import { BUDGET_KEYS, budgetLimits } from "../budget.ts";
import { mcpField } from "../mcp-choice.ts";
import { engineFields } from "./runner-fields.ts";
import { adaptFields, type Adapted } from "./harness-fields.ts";
import { AgentFileError, readCodexToml } from "./agent-file-formats.ts";
import type { FileKind, Harness } from "./harnesses.ts";
import type { Profile, ProfileSource } from "./profile-types.ts";
import {
  argList,
  baseName,
  bool,
  budgetField,
  extraArgsProblem,
  gateFields,
  Invalid,
  isolationField,
  list,
  memoryField,
  nameField,
  pick,
  runtimeField,
  str,
  thinkingField,
  timeoutField,
  toolFields,
  unsupportedFields,
} from "./profile-fields.ts";

export { MEMORY_SCOPES, THINKING_LEVELS, READONLY_TOOLS } from "./profile-types.ts";
export type { MemoryScope, Profile, ProfileSource, Thinking } from "./profile-types.ts";
export { extraArgsProblem, findProfile, nameSlug } from "./profile-fields.ts";

/** A file its own harness would not run (disabled, a remote agent): skipped like a document, not an error. */
class NotAnAgent extends Error {}

/** The file's text as fields + body, for its kind (markdown front matter or Codex TOML). */
function readAgentText(text: string, kind: FileKind): { fields: Fields; body: string; lenient?: string } {
  if (kind === "toml") return readCodexToml(text);
  return readFrontMatter(text);
}

function build(
  text: string,
  filePath: string,
  source: ProfileSource,
  harness: Harness = "pi",
  kindOf: FileKind = "md",
): Profile {
  return buildFrom(readAgentText(text, kindOf), filePath, source, harness);
}

/** A profile from fields already read (front matter, TOML, or an opencode.json entry). */
function buildFrom(
  read: { fields: Fields; body: string; lenient?: string },
  filePath: string,
  source: ProfileSource,
  harness: Harness,
): Profile {
  const adapted: Adapted = adaptFields(harness, read.fields, read.body);
  if (adapted.skip) throw new NotAnAgent(adapted.skip);
  const fm = normalizeFields(adapted.fields);
  const warnings: string[] = [...adapted.warnings];
  if (read.lenient)
    warnings.push(
      `front matter is not strict YAML (${read.lenient}); read line by line — quote values containing ": " to silence this`,
    );
  const name = nameField(fm, filePath, warnings);
  const tools = toolFields(fm, warnings, adapted.unavailable.length);
  if (adapted.unavailable.length) {
    tools.unavailableTools = [
      ...(tools.unavailableTools ?? []),
      ...adapted.unavailable.filter((t) => !tools.unavailableTools?.includes(t)),
    ];
    const i = warnings.findIndex((w) => w.startsWith("tools not available here:"));
    const line = `tools not available here: ${tools.unavailableTools.join(", ")}`;
    if (i >= 0) warnings[i] = line;
    else warnings.push(line);
  }
  const thinking = thinkingField(fm, warnings);
  const timeout = timeoutField(fm);
  const mode = str(fm, "systemPromptMode") ?? "replace";
  if (mode !== "replace" && mode !== "append")
    throw new Invalid(`field "systemPromptMode" must be "replace" or "append" (got "${mode}")`);
  const apiKey = str(fm, "apiKey");
  if (apiKey !== undefined && source === "project")
    throw new Invalid(
      'project profiles cannot set "apiKey" (a repository must not choose your credentials; put it in a user profile)',
    );
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
    keepProcesses: bool(fm, "keepProcesses"),
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
    outputSchema:
      adapted.outputSchema && !outputSchemaProblem('field "output"', adapted.outputSchema)
        ? adapted.outputSchema
        : undefined,
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
  if (/^(?:enabled[ \t]*:[ \t]*false|disabled[ \t]*:[ \t]*true)[ \t]*$/m.test(yaml))
    return "disabled in its front matter";
  return /^["']?description["']?[ \t]*:/m.test(yaml) ? null : "no description in its front matter";
}

/** The name a (possibly broken) profile file means to define: its `name:` line, else the file name. */
export function profileNameOf(text: string, filePath: string): string {
  // `name: x` (front matter) or `name = "x"` (Codex TOML)
  const m = /^name[ \t]*[:=][ \t]*["']?([A-Za-z0-9][A-Za-z0-9_.-]{0,63})["']?[ \t]*$/m.exec(text);
  return m ? m[1] : baseName(filePath);
}

/** The agent name a file name gives: `x.md`, Copilot's `x.agent.md`, Codex's `x.toml` → `x`. */
/** Parses one profile file. Never throws: `{ profile }` on success, `{ error }` with a reason naming the field otherwise. */
export function parseProfile(
  text: string,
  filePath: string,
  source: ProfileSource,
  harness: Harness = "pi",
  kindOf: FileKind = "md",
): { profile?: Profile; error?: string; skip?: string } {
  try {
    return { profile: build(text, filePath, source, harness, kindOf) };
  } catch (err) {
    return failure(err, kindOf === "md" ? text : null);
  }
}

/** parseProfile for fields read elsewhere (an opencode.json entry). */
export function parseProfileFields(
  read: { fields: Fields; body: string },
  filePath: string,
  source: ProfileSource,
  harness: Harness,
): { profile?: Profile; error?: string; skip?: string } {
  try {
    return { profile: buildFrom(read, filePath, source, harness) };
  } catch (err) {
    return failure(err, null);
  }
}

function failure(err: unknown, mdText: string | null): { error?: string; skip?: string } {
  if (err instanceof NotAnAgent) return { skip: err.message };
  if (err instanceof Invalid || err instanceof FrontMatterError)
    return { error: mdText === null ? err.message : withYamlNote(mdText, err.message) };
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

/** Conflicting skill settings (`noSkills` with a skill list: docs/agents.md); the whole delegate call fails on them. */
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
  const model = p.model
    ? p.provider && !p.model.includes("/")
      ? `${p.provider}/${p.model}`
      : p.model
    : p.provider
      ? `${p.provider}/default`
      : "default model";
  const tools = p.noTools
    ? "no tools"
    : p.tools
      ? `tools: ${p.tools.join(",")}`
      : p.excludeTools
        ? `all tools except ${p.excludeTools.join(",")}`
        : "default tools";
  const settings = [
    p.runtime && p.runtime !== "pi" ? `runs on ${p.runtime}` : "",
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
