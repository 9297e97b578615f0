// The MCP servers pi 1.x configures for a folder, read the way pi reads them (docs/mcp.md): `<agentDir>/mcp.json`,
// then the project's `.pi/mcp.json` (an entry there replaces the user's of the same name; one without
// command/url/type only overrides `enabled`/`exposure`). Only what the owner needs: names, whether enabled, whether
// pi waits for them at start, and how to start a stdio server for the probe. A broken file yields no servers here;
// the child's pi reports it as it always does.
import type { Host } from "../../host.ts";

export type McpServer = {
  name: string;
  /** It has `direct` tools: pi's first prompt waits up to 10 s for it (other exposures are waited for on use). */
  direct: boolean;
  stdio?: { command: string; args: string[]; env?: Record<string, string>; cwd?: string };
  url?: string;
};

type Entry = Record<string, unknown>;

function readServers(host: Host, file: string): Record<string, Entry> {
  const text = host.readText(file);
  if (text === null) return {};
  try {
    const parsed = JSON.parse(text) as { mcpServers?: unknown };
    const servers = parsed?.mcpServers;
    return servers && typeof servers === "object" && !Array.isArray(servers) ? (servers as Record<string, Entry>) : {};
  } catch {
    return {};
  }
}

/** Enabled servers for `cwd` (project servers only when `projectTrusted`, as pi does). */
export function configuredMcpServers(
  host: Host,
  opts: { agentDir: string; cwd: string; projectTrusted: boolean },
): McpServer[] {
  const merged: Record<string, Entry> = { ...readServers(host, `${opts.agentDir}/mcp.json`) };
  if (opts.projectTrusted) {
    for (const [name, entry] of Object.entries(readServers(host, `${opts.cwd}/.pi/mcp.json`))) {
      const replaces = entry && ("command" in entry || "url" in entry || "type" in entry);
      merged[name] = replaces || !merged[name] ? entry : { ...merged[name], ...pickOverrides(entry) };
    }
  }
  const out: McpServer[] = [];
  for (const [name, e] of Object.entries(merged)) {
    if (!e || typeof e !== "object" || e.enabled === false) continue;
    if (typeof e.command !== "string" && typeof e.url !== "string") continue;
    const toolExposure =
      e.toolExposure && typeof e.toolExposure === "object" ? Object.values(e.toolExposure as object) : [];
    const server: McpServer = { name, direct: e.exposure === "direct" || toolExposure.includes("direct") };
    if (typeof e.command === "string") {
      server.stdio = {
        command: e.command,
        args: Array.isArray(e.args) ? e.args.map(String) : [],
        env: e.env && typeof e.env === "object" ? (e.env as Record<string, string>) : undefined,
        cwd: typeof e.cwd === "string" ? e.cwd : undefined,
      };
    } else server.url = e.url as string;
    out.push(server);
  }
  return out;
}

function pickOverrides(e: Entry): Entry {
  const out: Entry = {};
  for (const k of ["enabled", "exposure", "toolExposure"]) if (k in e) out[k] = e[k];
  return out;
}
