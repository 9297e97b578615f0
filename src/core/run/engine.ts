// What a call runs on: the engine's parts (from settings and the environment), the call's context (from its front)
// and the caches its tasks fill once per call. createEngine is the one way an engine is made.
import type { Clock, Host } from "../host.ts";
import type { Profile } from "../profiles/profile.ts";
import type { Diagnostic } from "../profiles/profile-discovery.ts";
import type { Skill } from "../profiles/skills.ts";
import { readUserModels, type UserModels } from "../profiles/model-resolve.ts";
import type { Settings } from "../settings.ts";
import type { SessionStore } from "../store/store-types.ts";
import type { RunLimits } from "./process/runner.ts";
import type { WorktreeHost } from "./launch/isolation.ts";
import type { McpServer } from "./launch/mcp-config.ts";
import type { ParentPrompt } from "./launch/parent-prompt.ts";
import type { Tracing } from "../trace/span.ts";

/**
 * What a call runs on: the host, store, settings and profiles, which pi its children run, and this call's context
 * and caches. Built by createEngine from those parts and the call's context; nothing fills it in later
 * except the caches, which the stages fill once per call.
 */
export type Engine = EngineParts & {
  /** What the call's front knows of its parent (pi's session, model, tools, trust); empty in the CLI. */
  call: CallContext;
  /** Read once per call, when a task first needs it. */
  caches: CallCaches;
};

/** The parts of an engine that come from settings and the environment (no call in them). */
export type EngineParts = {
  host: Host;
  clock: Clock;
  store: SessionStore;
  settings: Settings;
  profiles: Map<string, Profile>;
  /** Profile files that could not be used (discovery's diagnostics): a task naming one is told why. */
  profileProblems?: Diagnostic[];
  agentDir: string;
  piCommand: string[];
  piEnv: Record<string, string>;
  /** Our executable's command (its `net-forward` role forwards a sandboxed child's connections when the child is
   *  not our pi: runners/network.ts); unset when there is none (then only our pi can have a closed network). */
  netForwarder?: string[];
  /** Which pi runs the children (`pi 0.87.1 · node 24.21.0 · /path`), recorded with every run. */
  piDescribe?: string;
  /** The children's pi emits agent_settled (pi ≥ 0.80.4). */
  piSettles?: boolean;
  /** The children's pi version ("" unknown): which flags and powers (MCP, --exclude-tools) it has. */
  piVersion?: string;
  /** The child extension file for `-e`; absent when the child's pi has it built in (the embedded pi). */
  childExtension?: string;
  /** Our own depth (0 for a user's CLI or top-level pi). */
  depth: number;
  limits?: Partial<RunLimits>;
  /** Git worktrees for `isolation: "worktree"` tasks (src/host/git-worktree.ts); unset: isolation fails. */
  worktrees?: WorktreeHost;
  /** Names of the given MCP servers that do not answer (src/host/mcp-probe.ts); unset: nothing is probed. */
  mcpProbe?: (servers: McpServer[], cwd: string) => Promise<string[]>;
  /** This process's tracing when the OTEL_* switches turn it on (src/host/otlp-exporter.ts); unset: off. */
  tracing?: Tracing;
};

export type CallContext = {
  /** The parent pi session's id: recorded with each child's session, named in a forked copy's header. */
  parentSession?: string;
  /** The parent pi's project-trust decision for its cwd (pi ≥ 0.8x); children in that tree inherit it. */
  projectTrust?: { cwd: string; trusted: boolean };
  /** The parent's model ("provider/id"), what `model: inherit` means; unset in the CLI (pi's default). */
  parentModel?: string;
  /** The parent pi's active tools, which a profile's deny list subtracts from (unset: pi's defaults). */
  parentTools?: string[];
  /** The parent pi's system prompt and tool definitions at call time (a cache-true fork repeats them: fork.ts). */
  parentPrompt?: ParentPrompt;
  /** The schedule this call runs for (`subagents schedule`): recorded with its sessions, told to hooks. */
  schedule?: string;
  /** Whether a project's hooks may run in this call: "allowed", or why not (the front asked); unset: the user's
   *  subagents.projectAgents decides (task-hooks.ts). */
  projectHooks?: "allowed" | string;
};

export type CallCaches = {
  /** Discovered only when a profile asks for skills. */
  skills?: Map<string, Skill>;
  /** Read from pi's files when a task names a model. */
  userModels?: UserModels;
  /** MCP probe results (one probe per call), keyed by folder and servers. */
  mcpDead?: Map<string, Promise<string[]>>;
  /** Task hooks still running (task-hooks.ts): the front waits for them before it exits (settleHooks). */
  hooksRunning?: Set<Promise<unknown>>;
};

/** The one way an engine is made: its parts, and the call it serves. */
export function createEngine<P extends EngineParts>(parts: P, call: CallContext = {}): P & Engine {
  return { ...parts, call, caches: {} };
}

/** The user's models and default model (pi's files), read once per call by the first task that needs them. */
export function userModels(engine: Pick<Engine, "host" | "agentDir" | "caches">): UserModels {
  engine.caches.userModels ??= readUserModels(engine.host, engine.agentDir);
  return engine.caches.userModels;
}

/** The parent's trust decision applies to its own folder and everything under it; elsewhere pi's own rules decide. */
export function trustFor(trust: CallContext["projectTrust"], cwd: string): "yes" | "no" | undefined {
  if (!trust) return undefined;
  const root = trust.cwd.endsWith("/") ? trust.cwd : `${trust.cwd}/`;
  if (cwd !== trust.cwd && !cwd.startsWith(root)) return undefined;
  return trust.trusted ? "yes" : "no";
}
