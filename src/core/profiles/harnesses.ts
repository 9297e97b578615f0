// Where each coding agent ("harness") keeps its agent files, and how its tool names read in pi's terms.
// People keep their agents where their other tools look for them; discovery reads all of these folders with
// the same rules (profile-discovery.ts). The order is precedence, lowest first: within one directory, pi's own
// folders win, then Claude Code's, then the other harnesses'. docs/agents.md "Agent files of other harnesses" mirrors it.

export type Harness = "pi" | "claude-code" | "codex" | "cursor" | "opencode" | "gemini" | "qwen" | "copilot" | "omp";

/** How the files of a location are read: markdown + front matter, Codex's TOML, or opencode's JSON config. */
export type FileKind = "md" | "toml" | "opencode-json";

/**
 * One place agents live. `path` is relative to the home directory (user), the agent dir (`agentDir: true`), or
 * each project directory. A `file` location is one config file holding several agents (opencode.json).
 */
export type Location = {
  harness: Harness;
  path: string;
  kind: FileKind;
  file?: boolean;
  agentDir?: boolean;
  needsDescription?: boolean;
};

/** User locations, lowest precedence first. `$CODEX_HOME` and `$XDG_CONFIG_HOME` move Codex's and opencode's. */
export function userLocations(env: Record<string, string | undefined>): Location[] {
  const codexHome = env.CODEX_HOME ? env.CODEX_HOME.replace(/\/+$/, "") : "~/.codex";
  const xdg = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME.replace(/\/+$/, "") : "~/.config";
  return [
    { harness: "codex", path: `${codexHome}/agents`, kind: "toml" },
    { harness: "cursor", path: "~/.cursor/agents", kind: "md" },
    { harness: "opencode", path: `${xdg}/opencode/opencode.jsonc`, kind: "opencode-json", file: true },
    { harness: "opencode", path: `${xdg}/opencode/opencode.json`, kind: "opencode-json", file: true },
    { harness: "opencode", path: `${xdg}/opencode/agent`, kind: "md" },
    { harness: "opencode", path: `${xdg}/opencode/agents`, kind: "md" },
    { harness: "gemini", path: "~/.gemini/agents", kind: "md" },
    { harness: "qwen", path: "~/.qwen/agents", kind: "md" },
    { harness: "copilot", path: "~/.copilot/agents", kind: "md" },
    { harness: "omp", path: "~/.omp/agent/agents", kind: "md" },
    { harness: "claude-code", path: "~/.claude/agents", kind: "md" },
    { harness: "pi", path: "agents", kind: "md", agentDir: true },
    // the delegate_to_subagents family's profiles, which need no description
    { harness: "pi", path: "agent-profiles", kind: "md", agentDir: true, needsDescription: false },
    { harness: "pi", path: "subagents", kind: "md", agentDir: true },
  ];
}

/** Project locations in each directory from the root down to cwd, lowest precedence first. */
export const PROJECT_LOCATIONS: Location[] = [
  { harness: "codex", path: ".codex/agents", kind: "toml" },
  { harness: "cursor", path: ".cursor/agents", kind: "md" },
  { harness: "opencode", path: "opencode.jsonc", kind: "opencode-json", file: true },
  { harness: "opencode", path: "opencode.json", kind: "opencode-json", file: true },
  { harness: "opencode", path: ".opencode/agent", kind: "md" },
  { harness: "opencode", path: ".opencode/agents", kind: "md" },
  { harness: "gemini", path: ".gemini/agents", kind: "md" },
  { harness: "qwen", path: ".qwen/agents", kind: "md" },
  { harness: "copilot", path: ".github/agents", kind: "md" },
  { harness: "omp", path: ".omp/agents", kind: "md" },
  { harness: "claude-code", path: ".claude/agents", kind: "md" },
  { harness: "pi", path: ".agents", kind: "md" },
  { harness: "pi", path: ".pi/agents", kind: "md" },
  { harness: "pi", path: ".pi/agent-profiles", kind: "md", needsDescription: false },
];

/** A harness's tool name → pi's tools (several for a coarse name: Copilot's `edit` covers edit and write). */
type ToolTable = Record<string, string[]>;

/** Gemini CLI's built-in tool names (Qwen Code inherits them). */
const GEMINI_TOOLS: ToolTable = {
  read_file: ["read"],
  read_many_files: ["read"],
  write_file: ["write"],
  replace: ["edit"],
  edit: ["edit"],
  run_shell_command: ["bash"],
  grep_search: ["grep"],
  search_file_content: ["grep"],
  grep: ["grep"],
  glob: ["find"],
  list_directory: ["ls"],
  ls: ["ls"],
};
const GEMINI_ONLY = [
  "web_fetch",
  "google_web_search",
  "web_search",
  "save_memory",
  "write_todos",
  "todo_write",
  "activate_skill",
  "task",
  "exit_plan_mode",
  "ask_user",
];

/** Qwen Code's display names, which its agent files use as often as the tool ids. */
const QWEN_TOOLS: ToolTable = {
  ...GEMINI_TOOLS,
  ReadFile: ["read"],
  ReadManyFiles: ["read"],
  WriteFile: ["write"],
  Edit: ["edit"],
  Shell: ["bash"],
  Grep: ["grep"],
  SearchText: ["grep"],
  Glob: ["find"],
  FindFiles: ["find"],
  ReadFolder: ["ls"],
  ListFiles: ["ls"],
};
const QWEN_ONLY = [...GEMINI_ONLY, "WebFetch", "WebSearch", "TodoWrite", "SaveMemory", "Task", "Skill"];

/**
 * GitHub Copilot's tool aliases (its docs' table) and the VS Code tool names its agent files list, bare or
 * with their tool set (`edit/editFiles`, `execute/runInTerminal`), in pi's terms. Copilot's other tools (VS Code
 * UI, web, tests, its own MCP servers) have no equivalent: every other name is unavailable.
 */
const COPILOT_TOOLS: ToolTable = {
  read: ["read"],
  readfile: ["read"],
  edit: ["edit", "write"],
  editfiles: ["edit", "write"],
  createfile: ["write"],
  execute: ["bash"],
  shell: ["bash"],
  bash: ["bash"],
  powershell: ["bash"],
  runinterminal: ["bash"],
  runcommands: ["bash"],
  getterminaloutput: ["bash"],
  search: ["grep", "find"],
  codebase: ["grep", "find"],
  textsearch: ["grep"],
  filesearch: ["find"],
  listdirectory: ["ls"],
  // Claude Code's names, which Copilot accepts as aliases
  write: ["write"],
  multiedit: ["edit"],
  grep: ["grep"],
  glob: ["find"],
  ls: ["ls"],
};
/** Copilot tool sets whose whole set (`edit/*`) maps like the bare name. */
const COPILOT_SETS = ["read", "edit", "execute", "search"];

/** opencode's tool names (its `tools` map and `permission` keys). */
export const OPENCODE_TOOLS: ToolTable = {
  bash: ["bash"],
  edit: ["edit", "write"],
  write: ["write"],
  patch: ["edit"],
  read: ["read"],
  grep: ["grep"],
  glob: ["find"],
  list: ["ls"],
};

/** oh-my-pi's tools that pi does not have (its others are pi's own names). */
const OMP_ONLY = [
  "task",
  "fetch",
  "web_search",
  "browser",
  "python",
  "lsp",
  "ask",
  "todo_write",
  "notebook",
  "ssh",
  "calc",
];

/** A Copilot name: `set/tool` by its tool, `set/*` and a bare set name by the set. */
function copilotTool(name: string): string[] | undefined {
  const [set, tool] = name.includes("/") ? name.split("/", 2) : [name, undefined];
  if (tool === undefined || tool === "*")
    return COPILOT_SETS.includes(set.toLowerCase()) || tool === undefined
      ? COPILOT_TOOLS[set.toLowerCase()]
      : undefined;
  return COPILOT_TOOLS[tool.toLowerCase()];
}

export type MappedHarnessTools = { tools: string[]; unavailable: string[]; all: boolean };

/**
 * A harness's written tool list in pi's names. `all` when it grants everything (`*`); names that have no
 * equivalent (web tools, its own sub-agent tool, MCP tools — `mcp_*`, `server/*`) are unavailable; any other
 * name passes on unchanged (Claude Code's names and an extension's tools are mapped as usual by the parser).
 */
export function mapHarnessTools(harness: Harness, written: string[]): MappedHarnessTools {
  const table =
    harness === "gemini" ? GEMINI_TOOLS : harness === "qwen" ? QWEN_TOOLS : harness === "copilot" ? COPILOT_TOOLS : {};
  const only = harness === "gemini" ? GEMINI_ONLY : harness === "qwen" ? QWEN_ONLY : harness === "omp" ? OMP_ONLY : [];
  const tools: string[] = [];
  const unavailable: string[] = [];
  let all = false;
  for (const name of written.map((s) => s.trim()).filter(Boolean)) {
    if (name === "*") {
      all = true;
      continue;
    }
    const mapped = harness === "copilot" ? copilotTool(name) : (table[name] ?? table[name.toLowerCase()]);
    if (mapped) {
      for (const t of mapped) if (!tools.includes(t)) tools.push(t);
    } else if (harness === "copilot" || only.includes(name) || /^mcp_/.test(name)) {
      if (!unavailable.includes(name)) unavailable.push(name);
    } else if (!tools.includes(name)) tools.push(name);
  }
  return { tools, unavailable, all };
}
