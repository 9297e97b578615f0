// What Claude Code's agent files mean in pi's terms: tool names, `effort`, and the fields we accept but do not
// act on. Kept apart from the parser so the tables are easy to read (README "Agent files" mirrors them).

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
  "WebFetch", "WebSearch", "Task", "Agent", "TodoWrite", "TodoRead", "NotebookEdit", "NotebookRead", "BashOutput",
  "KillBash", "KillShell", "Skill", "SlashCommand", "ExitPlanMode", "EnterPlanMode", "AskUserQuestion", "TaskCreate",
  "TaskGet", "TaskList", "TaskUpdate", "TaskOutput", "TaskStop", "SendMessage", "TeamCreate", "TeamDelete",
  "ListMcpResourcesTool", "ReadMcpResourceTool", "LSP",
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
 * a note); `mcp__server__tool` names need an MCP adapter pi does not have by default, so they are unavailable;
 * any other name (an extension's tool, e.g. `web_search`) passes through unchanged.
 */
export function mapTools(written: string[]): MappedTools {
  const tools: string[] = [];
  const unavailable: string[] = [];
  const notes: string[] = [];
  for (const raw of written) {
    const name = raw.trim();
    const pattern = /^([A-Za-z_][\w-]*)\((.*)\)$/.exec(name);
    const base = pattern ? pattern[1] : name;
    const mapped = CLAUDE_TOOL_MAP[base] ?? (PI_TOOLS.includes(base.toLowerCase()) ? base.toLowerCase() : undefined);
    if (mapped) {
      if (pattern) notes.push(`"${name}": the pattern is not enforced here; the whole ${mapped} tool is allowed`);
      if (!tools.includes(mapped)) tools.push(mapped);
    } else if (CLAUDE_ONLY_TOOLS.has(base) || base.startsWith("mcp__")) {
      if (!unavailable.includes(name)) unavailable.push(name);
    } else if (!tools.includes(name)) tools.push(name);
  }
  return { tools, unavailable, notes };
}

/** Claude Code's `effort` in pi's thinking levels. */
export const EFFORT_TO_THINKING: Record<string, string> = { low: "low", medium: "medium", high: "high", max: "xhigh", xhigh: "xhigh" };

/** Claude Code fields we read but cannot honour: accepted, reported as not supported here. */
export const UNSUPPORTED_FIELDS = ["permissionMode", "hooks", "mcpServers", "memory", "background", "isolation", "initialPrompt"];

/** Descriptive fields of the wider ecosystem (plugins, pi-subagents, skills): accepted without a word. */
export const QUIET_FIELDS = ["version", "author", "tags", "license", "metadata", "keywords", "category", "globs", "argument-hint", "aliases", "package"];
