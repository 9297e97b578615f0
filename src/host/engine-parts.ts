// The one way a front builds a call's engine (core/run/engine.ts): this process's host, store and long-lived parts,
// the folder's settings and agent files, and which pi the children run. The CLI (and `subagents mcp`, which it
// serves) and the pi extension each gather those their own way — a command line, a pi process — and hand them here.
import { realClock, type Host } from "../core/host.ts";
import type { Diagnostic } from "../core/profiles/profile-discovery.ts";
import type { Profile } from "../core/profiles/profile.ts";
import { createEngine, type CallContext, type Engine } from "../core/run/engine.ts";
import type { WorktreeHost } from "../core/run/launch/isolation.ts";
import type { Settings } from "../core/settings.ts";
import type { SessionStore } from "../core/store/store-types.ts";
import { childExtensionPath, runtimeDir } from "./child-extension-path.ts";
import { processTracing } from "./otlp-exporter.ts";
import type { PiCommand } from "./pi-command.ts";

/** What a process keeps for every call's engine: the MCP probe knows which servers answered; stale worktrees are
 *  finished once, when the worktree host is made. */
export type EngineShared = { mcpProbe: NonNullable<Engine["mcpProbe"]>; worktrees: WorktreeHost };

export type EngineSource = {
  host: Host;
  store: SessionStore;
  agentDir: string;
  /** The call's folder's settings and agent files (discovery's diagnostics: a task naming a broken one is told). */
  settings: Settings;
  found: { profiles: Map<string, Profile>; diagnostics?: Diagnostic[] };
  /** Which pi the children run (host/pi-command.ts). */
  pi: PiCommand;
  /** Our executable's command, for its network forwarder role (none: only our own pi can have a closed network). */
  netForwarder?: string[];
  shared: EngineShared;
};

/** Our own depth: 0 for a user's CLI or top-level pi; a child's is in its environment. */
export const depthOf = (env: Record<string, string | undefined>): number => Number(env.PI_SUBAGENT_DEPTH ?? 0) || 0;

/** A call's engine: the parts from its source, the call's context from its front. */
export function buildEngine(s: EngineSource, call: CallContext = {}): Engine {
  const { host, pi } = s;
  return createEngine(
    {
      host,
      clock: realClock,
      store: s.store,
      settings: s.settings,
      profiles: s.found.profiles,
      profileProblems: s.found.diagnostics,
      agentDir: s.agentDir,
      piCommand: pi.argv,
      piEnv: pi.env,
      netForwarder: s.netForwarder,
      piDescribe: pi.describe,
      piSettles: pi.settles,
      piVersion: pi.pi.version,
      mcpProbe: s.shared.mcpProbe,
      // A pi with our child extension built in needs no file of it (the embedded pi).
      childExtension: pi.builtinChild ? undefined : childExtensionPath(runtimeDir(s.agentDir)),
      depth: depthOf(host.env),
      worktrees: s.shared.worktrees,
      tracing: processTracing(host.env),
    },
    call,
  );
}
