// Which tools and MCP servers a child pi gets (docs/agents.md "MCP servers and tools in sub-agents"). Pure.
//
// A child gets what its pi would give it in the same folder: no `--tools` list unless its agent restricts tools.
// pi 1.x then keeps its MCP tools (`mcp__<server>__<tool>`) and codemode, which any explicit `--tools` list that
// does not name them drops (pi 1.5.2 measured: `--tools read,grep` → neither `codemode` nor MCP tools reachable).
// Deny lists and the max-depth guard use `--exclude-tools` where the child's pi has it, so they take away only
// what they name. pi 1.5.2 chooses MCP servers per process only all or nothing (`--no-mcp`); `--exclude-tools
// mcp__<server>__*` hides one server's tools but pi still starts it.
import type { Profile } from "../../profiles/profile.ts";
import type { McpChoice } from "../../mcp-choice.ts";
import { MESSAGE_TOOL } from "../../team.ts";
export type { McpChoice };

/** Registered in every child by our extension (src/child-extension/ask.ts). */
export const ASK_TOOL = "ask_parent";

/** What the child's pi understands; an unknown pi (a SUBAGENTS_PI command) is treated as the oldest we support. */
export type ChildPiCaps = {
  excludeTools: boolean;
  mcp: boolean;
  /** Project trust gates a folder's `.pi` settings (0.79). */
  projectTrust: boolean;
  /** `pi auth print-bearer-token --min-expiry` refreshes a sign-in token ahead of time (0.83). */
  authRefresh: boolean;
};

function atLeast(version: string, min: [number, number]): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > min[0] || (major === min[0] && minor >= min[1]);
}

export function childPiCaps(version: string | undefined): ChildPiCaps {
  // --exclude-tools: present in 0.87.1, absent in 0.73.1 (an unknown flag makes pi exit 1); built-in MCP: 1.0.
  const v = version ?? "";
  return {
    excludeTools: atLeast(v, [0, 87]),
    mcp: atLeast(v, [1, 0]),
    projectTrust: atLeast(v, [0, 79]),
    authRefresh: atLeast(v, [0, 83]),
  };
}

/** pi's MCP namespace of a server name: every character other than letters, digits and `_` becomes `_`. */
export function mcpNamespace(server: string): string {
  return server.replace(/[^A-Za-z0-9_]/g, "_");
}

/** Tool entries that reach MCP tools in pi 1.x: an `mcp__` pattern, codemode (scripts call MCP tools), tool_search. */
function reachesMcp(tools: string[]): boolean {
  return tools.some((t) => t.startsWith("mcp__") || t === "codemode" || t === "tool_search" || t === "*");
}

/** Whether an agent's tool restriction leaves MCP tools reachable at all (else its child gets `--no-mcp`). */
export function profileReachesMcp(p: Profile | null): boolean {
  if (p?.noTools) return false;
  return p?.tools ? reachesMcp(p.tools) : true;
}

export type ToolSelection = {
  argv: string[];
  /** Configured servers this child may use (after `mcp` and the probe); empty with `--no-mcp`. */
  servers: string[];
  /** Said to the user (window, record, --json). */
  warnings: string[];
};

export type ToolSelectionInput = {
  profile: Profile | null;
  /** The finalize tool to keep in an allow list, or null when finalize is off. */
  finalizeTool: string | null;
  /** Whether the child gets `ask_parent` (someone can answer its questions); default true. */
  askTool?: boolean;
  /** Whether the child gets `send_message` (its call has siblings: core/team.ts). */
  messageTool?: boolean;
  atMaxDepth: boolean;
  delegationTools: string[];
  /** The parent pi's active tools (unset in the CLI): what a deny list subtracts from. */
  parentTools?: string[];
  /** pi's default tools: what a deny list subtracts from on a pi without --exclude-tools. */
  baseTools: string[];
  caps: ChildPiCaps;
  /** The agent's `mcp`, else `subagents.mcp`. */
  mcp: McpChoice;
  /** MCP servers configured for the child's folder (pi's mcp.json files); only read when caps.mcp. */
  configured: string[];
  /** Configured servers that did not answer the owner's probe this call. */
  dead?: string[];
};

/** Never inherited through a deny list: `subagent` itself and our own tools (added below). */
const NOT_INHERITED = ["subagent", "subagent_finalize", ASK_TOOL, MESSAGE_TOOL];

export function selectTools(input: ToolSelectionInput): ToolSelection {
  const p = input.profile;
  const argv: string[] = [];
  const warnings: string[] = [];
  const exclude: string[] = [];
  // An allow list keeps our own tools: the finalize tool per contract, and ask_parent whenever someone can answer
  // (asking is not acting).
  const withFinalize = (list: string[]) => {
    let out = input.finalizeTool && !list.includes(input.finalizeTool) ? [...list, input.finalizeTool] : list;
    if (input.messageTool && !out.includes(MESSAGE_TOOL)) out = [...out, MESSAGE_TOOL];
    return out.includes(ASK_TOOL) || input.askTool === false ? out : [...out, ASK_TOOL];
  };
  let allow: string[] | null = null;
  if (p?.noTools) allow = [];
  else if (p?.tools) allow = [...p.tools];
  else if (p?.excludeTools?.length) {
    // Spec 001: a deny list subtracts from the PARENT's active tools (a read-only parent never hands a child write
    // tools); with no parent pi (the CLI) it subtracts from what the child's pi gives, MCP tools included.
    if (input.caps.excludeTools && !input.parentTools) exclude.push(...p.excludeTools);
    else
      allow = (input.parentTools ?? input.baseTools).filter(
        (t) => !NOT_INHERITED.includes(t) && !p.excludeTools!.includes(t),
      );
  }
  if (input.atMaxDepth) {
    if (allow) allow = allow.filter((t) => !input.delegationTools.includes(t));
    else if (input.caps.excludeTools) exclude.push(...input.delegationTools);
    // A pi without --exclude-tools: only an allow list keeps auto-discovered delegation tools away.
    else allow = ["read", "bash", "edit", "write"];
  }
  if (allow) argv.push("--tools", withFinalize(allow).join(","));

  let servers: string[] = [];
  if (input.caps.mcp) {
    const wanted =
      input.mcp === true
        ? input.configured
        : input.mcp === false
          ? []
          : input.configured.filter((s) => (input.mcp as string[]).some((n) => mcpNamespace(n) === mcpNamespace(s)));
    if (Array.isArray(input.mcp)) {
      const unknown = input.mcp.filter((n) => !input.configured.some((s) => mcpNamespace(s) === mcpNamespace(n)));
      if (unknown.length)
        warnings.push(
          `mcp: no MCP server named ${unknown.join(", ")} is configured here (configured: ${input.configured.join(", ") || "none"})`,
        );
    }
    const dead = input.dead ?? [];
    servers = wanted.filter((s) => !dead.includes(s));
    const deadWanted = wanted.filter((s) => dead.includes(s));
    // An allow list that names no MCP tool, codemode or tool_search leaves every MCP tool out of reach: the
    // servers would only cost start-up time.
    const unreachable = allow !== null && !reachesMcp(allow);
    if (servers.length === 0 || unreachable) {
      if (input.configured.length) argv.push("--no-mcp");
      servers = [];
      if (deadWanted.length && !unreachable)
        warnings.push(`MCP server ${deadWanted.join(", ")} did not answer: the child runs without MCP servers`);
    } else {
      for (const s of input.configured) if (!servers.includes(s)) exclude.push(`mcp__${mcpNamespace(s)}__*`);
      if (deadWanted.length)
        warnings.push(
          `MCP server ${deadWanted.join(", ")} did not answer: its tools are left out (pi still starts it in each child; disable it in mcp.json or name the servers an agent needs with "mcp")`,
        );
    }
  } else if (Array.isArray(input.mcp) && input.mcp.length) {
    warnings.push(`mcp: this pi has no MCP support (pi 1.0 or newer has); ignored`);
  }
  if (exclude.length) argv.push("--exclude-tools", [...new Set(exclude)].join(","));
  return { argv, servers, warnings };
}
