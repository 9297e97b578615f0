// What a task's child gets of the user's MCP servers (pi 1.x): the agent's `mcp`, else `subagents.mcp`; the
// servers configured for its folder; and which of those the owner found dead this call. Servers whose tools make
// pi's first prompt wait (`direct` exposure) are probed once per call, so a hung one costs one wait per call, not
// pi's 10 s in every child.
import type { Profile } from "../profiles/profile.ts";
import type { Engine } from "./engine.ts";
import { childPiCaps, mcpNamespace, profileReachesMcp, type McpChoice } from "./launch/child-tools.ts";
import { configuredMcpServers, type McpServer } from "./launch/mcp-config.ts";
import { trustFor } from "./engine.ts";

export type ChildMcp = { mcp: McpChoice; mcpServers?: string[]; deadMcpServers?: string[] };

export async function childMcp(engine: Engine, profile: Profile | null, cwd: string): Promise<ChildMcp> {
  const mcp = profile?.mcp ?? engine.settings.mcp;
  if (!childPiCaps(engine.piVersion).mcp) return { mcp };
  // Project servers are read (and probed: starting one runs a repository's command) only in a trusted folder.
  const servers = configuredMcpServers(engine.host, {
    agentDir: engine.agentDir,
    cwd,
    projectTrusted: trustFor(engine.call.projectTrust, cwd) === "yes",
  });
  const wanted = (s: McpServer) =>
    mcp === true || (Array.isArray(mcp) && mcp.some((n) => mcpNamespace(n) === mcpNamespace(s.name)));
  const toProbe = profileReachesMcp(profile) ? servers.filter((s) => wanted(s) && s.direct && s.stdio) : [];
  let dead: string[] = [];
  if (toProbe.length && engine.mcpProbe) {
    const key = `${cwd}\0${toProbe.map((s) => s.name).join("\0")}`;
    engine.caches.mcpDead ??= new Map();
    let pending = engine.caches.mcpDead.get(key);
    if (!pending) {
      pending = engine.mcpProbe(toProbe, cwd);
      engine.caches.mcpDead.set(key, pending);
    }
    dead = await pending;
  }
  return { mcp, mcpServers: servers.map((s) => s.name), deadMcpServers: dead };
}
