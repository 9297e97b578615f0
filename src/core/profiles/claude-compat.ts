// What Claude Code's agent files mean in pi's terms: tool names, `effort`, and the fields we accept but do not
// act on. Kept apart from the parser so the tables are easy to read (docs/agents.md mirrors them).

/** Claude Code tool names with a pi equivalent. */
export const CLAUDE_TOOL_MAP: Record<string, string> = {
  Read: "read",
  Write: "write",
  Edit: "edit",
  MultiEdit: "edit",
  Bash: "bash",
  Grep: "grep",
  Glob: "find",
  LS: "ls",
};

/** Claude Code tools pi does not have. A file listing them still loads; the child is told they are missing. */
export const CLAUDE_ONLY_TOOLS = new Set([
  "WebFetch",
  "WebSearch",
  "Task",
  "Agent",
  "TodoWrite",
  "TodoRead",
  "NotebookEdit",
  "NotebookRead",
  "BashOutput",
  "KillBash",
  "KillShell",
  "Skill",
  "SlashCommand",
  "ExitPlanMode",
  "EnterPlanMode",
  "AskUserQuestion",
  "TaskCreate",
  "TaskGet",
  "TaskList",
  "TaskUpdate",
  "TaskOutput",
  "TaskStop",
  "SendMessage",
  "TeamCreate",
  "TeamDelete",
  "ListMcpResourcesTool",
  "ReadMcpResourceTool",
  "LSP",
]);

/** pi's own tools (built-in), which pass through as they are. */
export const PI_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];

export type MappedTools = {
  /** pi tool names, deduplicated, in the order written. */
  tools: string[];
  /** Names as written that have no equivalent here. */
  unavailable: string[];
  /** Notes about names that were mapped with a loss (e.g. a command pattern that is not enforced). */
  notes: string[];
};

/**
 * Maps a written tool list to pi names. `Bash(git:*)`-style patterns keep the tool but lose the pattern (said in
 * a note); `mcp__server__tool` names are pi 1.x's own names for MCP tools, so they pass through (a pi without
 * MCP ignores them); pi-subagents' `mcp:server` names have no equivalent; any other name (an extension's tool,
 * e.g. `web_search`) passes through unchanged.
 */
export function mapTools(written: string[]): MappedTools {
  const tools: string[] = [];
  const unavailable: string[] = [];
  const notes: string[] = [];
  // "Read Grep Glob" (spaces instead of commas) is a list too; a pattern's own spaces ("Bash(git log:*)") are not.
  const names = written.flatMap((raw) => (raw.includes("(") ? [raw.trim()] : raw.trim().split(/\s+/)));
  for (const name of names.filter(Boolean)) {
    // tintinweb's `ext:<extension>/<tool>` names one extension tool; `ext:<extension>` (all of them) cannot be mapped.
    const ext = /^ext:[^/]+\/(.+)$/.exec(name);
    if (ext) {
      if (!tools.includes(ext[1])) tools.push(ext[1]);
      continue;
    }
    if (name.startsWith("ext:")) {
      if (!unavailable.includes(name)) unavailable.push(name);
      continue;
    }
    const pattern = /^([A-Za-z_][\w-]*)\((.*)\)$/.exec(name);
    const base = pattern ? pattern[1] : name;
    const mapped = CLAUDE_TOOL_MAP[base] ?? (PI_TOOLS.includes(base.toLowerCase()) ? base.toLowerCase() : undefined);
    if (mapped) {
      if (pattern) notes.push(`"${name}": the pattern is not enforced here; the whole ${mapped} tool is allowed`);
      if (!tools.includes(mapped)) tools.push(mapped);
    } else if (CLAUDE_ONLY_TOOLS.has(base) || base.startsWith("mcp:")) {
      if (!unavailable.includes(name)) unavailable.push(name);
    } else if (!tools.includes(name)) tools.push(name);
  }
  return { tools, unavailable, notes };
}

/** Claude Code's `effort` in pi's thinking levels. */
export const EFFORT_TO_THINKING: Record<string, string> = {
  low: "low",
  medium: "medium",
  high: "high",
  max: "xhigh",
  xhigh: "xhigh",
};

/** Claude Code fields we read but cannot honour: accepted, reported as not supported here. */
export const UNSUPPORTED_FIELDS = ["permissionMode", "hooks", "background", "initialPrompt"];

/** Descriptive fields of the wider ecosystem (plugins, pi-subagents, skills): accepted without a word. */
export const QUIET_FIELDS = [
  "version",
  "author",
  "tags",
  "license",
  "metadata",
  "keywords",
  "category",
  "globs",
  "argument-hint",
  "aliases",
  "package",
  "display_name",
  "enabled",
  "disabled",
  "expertise_level",
];

/**
 * Other agent tools' spellings of our fields (tintinweb's pi-subagents writes snake_case, booleans for
 * `skills`/`extensions`, `max` thinking), rewritten to ours before the fields are read.
 */
export function normalizeFields(fm: Record<string, unknown>): Record<string, unknown> {
  const out = { ...fm };
  const rename = (from: string, to: string) => {
    if (out[from] !== undefined && out[to] === undefined) out[to] = out[from];
    if (out[from] !== undefined && out[to] === out[from]) delete out[from];
  };
  rename("disallowed_tools", "disallowedTools");
  rename("max_turns", "maxTurns");
  rename("prompt_mode", "systemPromptMode");
  if (out.maxTurns === 0) delete out.maxTurns; // "0 = unlimited" there
  for (const [key, off] of [
    ["extensions", "noExtensions"],
    ["skills", "noSkills"],
  ] as const) {
    if (out[key] === true) delete out[key];
    else if (out[key] === false) {
      delete out[key];
      out[off] ??= true;
    }
  }
  for (const key of ["thinking", "thinkingLevel"])
    if (typeof out[key] === "string" && out[key].trim().toLowerCase() === "max") out[key] = "xhigh";
  return out;
}
