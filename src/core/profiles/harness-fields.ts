// Other harnesses' agent fields in ours, before the common parser (profile.ts) reads them. Each harness names
// the same ideas differently (Codex's `model_reasoning_effort`, Gemini's `timeout_mins`, Qwen's
// `runConfig.max_turns`, opencode's `tools` map and `permission`, Cursor's `model: fast`, oh-my-pi's `output`).
// What is mapped leaves the field set; what is left is reported by the parser as "not supported here", once.
// docs/agents.md "Agent files of other harnesses" has the table.
import { stringList } from "../string-list.ts";
import type { Fields } from "./front-matter.ts";
import { mapHarnessTools, OPENCODE_TOOLS, type Harness } from "./harnesses.ts";

/** What a harness's file adds beyond our fields: said once as warnings, carried on the profile. */
export type Adapted = {
  fields: Fields;
  body: string;
  warnings: string[];
  /** Tools the file lists that do not exist here (beyond what the common parser finds). */
  unavailable: string[];
  /** Inline MCP server definitions (Codex `mcp_servers`, Gemini and Claude Code `mcpServers`, Copilot `mcp-servers`). */
  mcpServers?: Record<string, unknown>;
  /** A JSON schema for the agent's answer (oh-my-pi `output`). */
  outputSchema?: Record<string, unknown>;
  /** Set when the file is, by its own harness's rules, not a usable agent here (disabled, remote). */
  skip?: string;
};

const isMap = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** Names of the fields that Claude Code-shaped files may carry as they are: no translation needed. */
const AS_WRITTEN: Harness[] = ["pi", "claude-code"];

/** Codex's `model_reasoning_effort` (and Qwen/Gemini-style effort words) in pi's thinking levels. */
const REASONING: Record<string, string> = {
  none: "off",
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "xhigh",
  max: "xhigh",
};

function take(fm: Fields, key: string): unknown {
  const v = fm[key];
  delete fm[key];
  return v;
}

function positiveNumber(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : undefined;
}

/** A written tool list (YAML list or comma string) mapped for a harness whose names differ from Claude Code's. */
function mapToolList(harness: Harness, fm: Fields, out: Adapted): void {
  const written = stringList(fm.tools);
  if (!written) return; // the parser reports a malformed value
  const mapped = mapHarnessTools(harness, written);
  out.unavailable.push(...mapped.unavailable);
  if (mapped.all) delete fm.tools;
  else fm.tools = mapped.tools;
  if (!mapped.all && !mapped.tools.length && mapped.unavailable.length)
    out.warnings.push("none of the listed tools exist here: the agent runs without tools");
}

/** A deny list in a harness's names: mapped; names with no equivalent here need no denying. */
function mapDenyList(harness: Harness, fm: Fields): void {
  for (const key of ["disallowedTools", "excludeTools"]) {
    const written = stringList(fm[key]);
    if (written) fm[key] = mapHarnessTools(harness, written).tools;
  }
}

function inlineMcp(fm: Fields, key: string, out: Adapted): void {
  const v = take(fm, key);
  if (v === undefined || v === null) return;
  if (!isMap(v)) {
    out.warnings.push(`"${key}" must be a mapping of server definitions (ignored)`);
    return;
  }
  recordMcp(fm, [], v, out);
}

/**
 * Claude Code's `mcpServers`: a list whose items are names of servers the user configured or one-key mappings
 * (an inline definition), or one mapping of definitions. The names become the agent's `mcp` choice.
 */
function claudeMcp(fm: Fields, out: Adapted): void {
  const v = take(fm, "mcpServers");
  if (v === undefined || v === null) return;
  const names: string[] = [];
  const defined: Record<string, unknown> = {};
  const items = isMap(v) ? [v] : Array.isArray(v) ? v : null;
  if (!items || items.some((i) => !(typeof i === "string" || isMap(i)))) {
    out.warnings.push('"mcpServers" must be a list of MCP server names or definitions (ignored)');
    return;
  }
  for (const item of items) {
    if (typeof item === "string")
      names.push(
        ...item
          .split(",")
          .map((n) => n.trim())
          .filter(Boolean),
      );
    else Object.assign(defined, item);
  }
  recordMcp(fm, names, defined, out);
}

/**
 * MCP servers an agent file names or defines. Inline definitions are recorded, not started (a child starts only
 * the servers pi's mcp.json configures). Unless the file sets our own `mcp`, the agent gets just these servers by
 * name: a named one, and a defined one whose name the user configured too (pi's definition runs, not the file's).
 */
function recordMcp(fm: Fields, names: string[], defined: Record<string, unknown>, out: Adapted): void {
  const definedNames = Object.keys(defined);
  if (definedNames.length) out.mcpServers = defined;
  const byName = fm.mcp === undefined;
  if (byName) fm.mcp = [...new Set([...names, ...definedNames])];
  if (!definedNames.length) return;
  const note = byName
    ? " (a server of the same name in pi's mcp.json is used instead; the agent gets no other MCP servers)"
    : "";
  out.warnings.push(`inline MCP servers are not started yet: ${definedNames.join(", ")}${note}`);
}

/** Minutes → our `timeout` (seconds). */
function minutes(fm: Fields, key: string, out: Adapted, v: unknown = take(fm, key)): void {
  if (v === undefined) return;
  const n = positiveNumber(v);
  if (n === undefined) out.warnings.push(`"${key}" must be a positive number of minutes (ignored)`);
  else if (fm.timeout === undefined) fm.timeout = n * 60;
}

/** A turn limit of another name → our `maxTurns` budget. */
function turns(fm: Fields, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (fm.maxTurns === undefined) fm.maxTurns = value;
  delete fm[key];
}

function codex(fm: Fields, out: Adapted): void {
  const effort = take(fm, "model_reasoning_effort");
  if (typeof effort === "string") {
    const level = REASONING[effort.trim().toLowerCase()];
    if (level) fm.thinking ??= level;
    else out.warnings.push(`model_reasoning_effort "${effort}" has no thinking level here (ignored)`);
  }
  const sandbox = take(fm, "sandbox_mode");
  if (sandbox === "read-only") fm.readonly ??= true;
  else if (sandbox === "workspace-write")
    out.warnings.push(
      'sandbox_mode "workspace-write" is not enforced here: the agent gets pi\'s tools without a sandbox',
    );
  else if (sandbox !== undefined && sandbox !== "danger-full-access")
    out.warnings.push(`sandbox_mode ${JSON.stringify(sandbox)} is not known (ignored)`);
  inlineMcp(fm, "mcp_servers", out);
  delete fm.nickname_candidates; // display names in Codex's UI
  // Codex's [tools] and [skills] tables are its own settings, not our tool or skill lists: reported, not misread.
  for (const key of ["tools", "skills"]) {
    if (!isMap(fm[key])) continue;
    delete fm[key];
    out.warnings.push(`Codex's [${key}] settings are not supported here (ignored)`);
  }
}

function cursor(fm: Fields, out: Adapted): void {
  if (take(fm, "is_background") === true)
    out.warnings.push("is_background: runs like any other agent here (use a background delegate call)");
}

/**
 * opencode: `tools` is a map (`write: false` turns a tool off), `permission` says allow/ask/deny per tool; a
 * child cannot ask anyone, so `ask` is read as deny (said once). `steps` / `maxSteps` are its turn limit.
 */
function opencode(fm: Fields, out: Adapted): void {
  if (fm.disable === true) out.skip = "disabled in its front matter (disable: true)";
  delete fm.disable;
  delete fm.mode; // primary / subagent / all: who may pick it in opencode's UI
  delete fm.hidden;
  const deny: string[] = [];
  const add = (tool: string) => {
    for (const t of OPENCODE_TOOLS[tool] ?? []) if (!deny.includes(t)) deny.push(t);
  };
  const tools = fm.tools;
  if (isMap(tools)) {
    delete fm.tools;
    for (const [name, on] of Object.entries(tools)) if (on === false) add(name);
  }
  const written = take(fm, "permission");
  // `permission: deny` (one rule for everything) and a `"*"` key are the rule for every tool not named.
  const permission = typeof written === "string" ? { "*": written } : written;
  if (isMap(permission)) {
    const asked: string[] = [];
    const rules = Object.entries(permission);
    if (permission["*"] !== undefined)
      for (const tool of Object.keys(OPENCODE_TOOLS)) if (!(tool in permission)) rules.push([tool, permission["*"]]);
    for (const [name, rule] of rules) {
      if (!OPENCODE_TOOLS[name]) continue;
      // A pattern map (bash: {"git *": "allow", "*": "deny"}) is read by its "*" rule; its patterns are not enforced.
      const whole = isMap(rule) ? rule["*"] : rule;
      if (isMap(rule))
        out.warnings.push(
          `permission "${name}": command patterns are not enforced here; "*" decides (${whole ?? "allow"})`,
        );
      if (whole === "deny") add(name);
      if (whole === "ask") {
        add(name);
        asked.push(name);
      }
    }
    if (asked.length)
      out.warnings.push(
        `permission "ask" for ${asked.join(", ")}: a child cannot ask, so it does not get ${asked.length > 1 ? "them" : "it"}`,
      );
  } else if (permission !== undefined) out.warnings.push('"permission" must be a mapping (ignored)');
  if (deny.length) {
    const existing = Array.isArray(fm.disallowedTools) ? (fm.disallowedTools as string[]) : [];
    fm.disallowedTools = [...existing, ...deny.filter((t) => !existing.includes(t))];
  }
  turns(fm, "steps", fm.steps);
  turns(fm, "maxSteps", fm.maxSteps);
  if (typeof fm.prompt === "string" && !out.body.trim()) out.body = take(fm, "prompt") as string;
}

function gemini(fm: Fields, out: Adapted): void {
  const kind = take(fm, "kind");
  if (kind === "remote") out.skip = "a remote (A2A) agent: only local agents run here";
  mapToolList("gemini", fm, out);
  mapDenyList("gemini", fm);
  inlineMcp(fm, "mcpServers", out);
  minutes(fm, "timeout_mins", out);
}

/** Qwen's `authType:modelId` (e.g. `openai:gpt-4o`) is our `provider/id`; a `:high` suffix stays a thinking level. */
function qwenModel(model: string): string {
  const m = /^([a-z][\w-]*):(.+)$/i.exec(model.trim());
  if (!m || REASONING[m[2].toLowerCase()] || m[2].toLowerCase() === "off") return model;
  return `${m[1]}/${m[2]}`;
}

function qwen(fm: Fields, out: Adapted): void {
  mapToolList("qwen", fm, out);
  mapDenyList("qwen", fm);
  // approvalMode: `plan` is analyse-only (read-only here); the others say how calls are approved, which
  // a child that runs without asking already does.
  const approval = take(fm, "approvalMode");
  if (approval === "plan") fm.readonly ??= true;
  else if (approval !== undefined && !["default", "auto-edit", "yolo", "bubble"].includes(String(approval)))
    out.warnings.push(`approvalMode ${JSON.stringify(approval)} is not known (ignored)`);
  const model = take(fm, "modelConfig");
  if (isMap(model)) {
    if (typeof model.model === "string" && fm.model === undefined) fm.model = model.model;
    const rest = Object.keys(model).filter((k) => k !== "model");
    if (rest.length) out.warnings.push(`modelConfig: not supported here (ignored): ${rest.join(", ")}`);
  }
  if (typeof fm.model === "string") fm.model = qwenModel(fm.model);
  const run = take(fm, "runConfig");
  if (isMap(run)) {
    turns(fm, "max_turns", run.max_turns ?? run.maxTurns);
    const mins = run.max_time_minutes ?? run.maxTimeMinutes;
    minutes(fm, "runConfig.max_time_minutes", out, mins);
  }
}

/** Copilot writes display model names ("Claude Sonnet 4.5", "GPT-4.1 (copilot)"): made into ids. */
export function copilotModelId(written: string): string {
  const id = written
    .replace(/\s*\([^)]*\)\s*$/, "")
    .trim()
    .toLowerCase()
    .replace(/\s+/g, "-");
  // Anthropic's ids spell versions with dashes (claude-sonnet-4-5), Copilot's names with dots.
  return id.startsWith("claude-") ? id.replace(/\./g, "-") : id;
}

function copilot(fm: Fields, out: Adapted): void {
  mapDenyList("copilot", fm);
  // Copilot's `name` is a display name ("API Architect"); the file name is the agent's identity there. A
  // name that is already usable as one is kept; a display name gives way to the file name, quietly.
  if (typeof fm.name === "string" && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(fm.name.trim())) delete fm.name;
  mapToolList("copilot", fm, out);
  inlineMcp(fm, "mcp-servers", out);
  if (typeof fm.model === "string") fm.model = copilotModelId(fm.model);
  else if (Array.isArray(fm.model) && fm.model.every((m) => typeof m === "string")) {
    const [first, ...rest] = (fm.model as string[]).map(copilotModelId);
    fm.model = first;
    if (rest.length && fm.fallbackModels === undefined) fm.fallbackModels = rest;
  }
  delete fm.target; // where it shows in GitHub's UI
}

function omp(fm: Fields, out: Adapted): void {
  mapToolList("omp", fm, out);
  // A model list (or comma string) is a preference order: the first to run, the rest as fallbacks.
  const models =
    typeof fm.model === "string" && fm.model.includes(",")
      ? fm.model
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : Array.isArray(fm.model)
        ? fm.model
        : null;
  if (models?.length && models.every((m) => typeof m === "string")) {
    fm.model = models[0];
    if (models.length > 1 && fm.fallbackModels === undefined) fm.fallbackModels = models.slice(1);
  }
  const output = take(fm, "output");
  if (isMap(output)) out.outputSchema = output;
  else if (output !== undefined) out.warnings.push('"output" must be a JSON schema (a mapping; ignored)');
  if (fm.autoloadSkills !== undefined && fm.loadSkills === undefined && fm.skills === undefined)
    fm.loadSkills = fm.autoloadSkills;
  delete fm.autoloadSkills;
}

/** Reads a harness's fields as ours. `fields` is copied; the caller's object is left alone. */
export function adaptFields(harness: Harness, fields: Fields, body: string): Adapted {
  const out: Adapted = { fields: { ...fields }, body, warnings: [], unavailable: [] };
  const fm = out.fields;
  if (AS_WRITTEN.includes(harness)) {
    claudeMcp(fm, out);
    return out;
  }
  if (harness === "codex") codex(fm, out);
  else if (harness === "cursor") cursor(fm, out);
  else if (harness === "opencode") opencode(fm, out);
  else if (harness === "gemini") gemini(fm, out);
  else if (harness === "qwen") qwen(fm, out);
  else if (harness === "copilot") copilot(fm, out);
  else if (harness === "omp") omp(fm, out);
  return out;
}
