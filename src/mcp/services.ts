// What the MCP front runs on, given by the process that serves it (`subagents mcp`, src/cli/commands/mcp.ts): the
// store, an engine for a folder, that folder's settings and profiles, and this process's owner endpoint — so the
// front itself knows nothing of how the executable finds its pi or opens its database.
import type { Owner } from "../control/owner.ts";
import type { Host } from "../core/host.ts";
import type { Profile } from "../core/profiles/profile.ts";
import type { Engine } from "../core/run/engine.ts";
import type { Settings } from "../core/settings.ts";
import type { SessionStore } from "../core/store/store-types.ts";

export type McpServices = {
  host: Host;
  agentDir: string;
  store: SessionStore;
  /** Where owner records live (next to the store): steer and wait find a session's owner there. */
  dataDir: string;
  /** The folder the client started the server in. */
  cwd: string;
  version: string;
  settingsFor(cwd: string): Settings;
  profilesFor(cwd: string): { profiles: Map<string, Profile>; diagnostics: { file: string; reason: string }[] };
  /** A call's engine for its folder (throws when no pi can run the children). */
  engineFor(cwd: string): Engine;
  /** This server's control endpoint: `subagents sessions`, `attach`, `steer` and `cancel` reach its children. */
  owner(): Promise<Owner>;
  /** How to start this program again (a batch job runs in a process of its own). */
  command?: string[];
};
