// What the pi extension runs on: the host of the runtime pi itself uses (Bun pi → Bun host, Node pi → Node
// host), the session store (SQLite when the runtime has it, else memory with one notice), and an engine per cwd.
import * as path from "node:path";
import type { Db, Host } from "../core/host.ts";
import { agentDir as resolveAgentDir, discoverProfiles } from "../core/profiles/profile-discovery.ts";
import type { Profile } from "../core/profiles/profile.ts";
import { loadSettings, type Settings } from "../core/settings.ts";
import { MemoryStore, type SessionStore } from "../core/store/store.ts";
import { storeFileOf, type RunOwner } from "../core/store/store-types.ts";
import { openStoreFile } from "../host/open-store.ts";
import { ownerAlive } from "../control/registry.ts";
import type { CallContext, Engine } from "../core/run/engine.ts";
import type { Diagnostic } from "../core/profiles/profile-discovery.ts";
import { runtimeDir } from "../host/child-extension-path.ts";
import { buildEngine, depthOf, type EngineShared } from "../host/engine-parts.ts";
import { bunDbOpener } from "../host/sqlite-bun.ts";
import { createNodeHost } from "../host/node.ts";
import { bundledEmbedded, bundledExecutable, installedEmbedded } from "../host/embedded-pi.ts";
import { resolvePiCommand, type PiCommand } from "../host/pi-command.ts";
import { startOwner, type Owner } from "../control/owner.ts";
import { createWorktreeHost } from "../host/git-worktree.ts";
import { createMcpProbe } from "../host/mcp-probe.ts";

export type PiServices = {
  host: Host;
  agentDir: string;
  store: SessionStore;
  /** Where owner records live (next to the store): steer, cancel and wait find a session's owner there. */
  dataDir: string;
  /** Set when sessions are only kept in memory (Node without node:sqlite). */
  memoryNotice: string | null;
  settingsFor(cwd: string): { settings: Settings; warnings: string[] };
  profilesFor(cwd: string): { profiles: Map<string, Profile>; diagnostics: { file: string; reason: string }[] };
  /** The engine of one tool call: this process's parts for the call's folder and settings, and the call's context. */
  engineFor(
    cwd: string,
    settings: Settings,
    found: { profiles: Map<string, Profile>; diagnostics?: Diagnostic[] },
    call: CallContext,
  ): Engine;
  depth: number;
  /** This pi session's control endpoint (started on first use): steer/cancel/wait reach its children through it. */
  owner(): Promise<Owner>;
  /** Stops the control endpoint (session shutdown). */
  closeOwner(): void;
  /** The executable a batch job runs in (subagent_batch), when one is at hand. */
  batchCommand?: string[];
};

async function openDbFactory(): Promise<((file: string) => Db) | null> {
  if (typeof Bun !== "undefined") {
    // Dynamic on purpose: a static bun:sqlite import makes the bundle fail to load in Node pi.
    const { Database } = await import("bun:sqlite");
    return bunDbOpener(Database);
  }
  const mod = await import("../host/sqlite-node.ts");
  return mod.loadNodeDb();
}

/** Whether this process is a sub-agent that may not delegate further (settings.maxDepth), read without a store. */
export function childAtMaxDepth(): boolean {
  const host = createNodeHost(() => {
    throw new Error("no database here");
  });
  const depth = depthOf(host.env);
  const { settings } = loadSettings(host, { agentDir: resolveAgentDir(host.env, host.homedir()), cwd: process.cwd() });
  return depth >= settings.maxDepth;
}

export async function createServices(): Promise<PiServices> {
  const open = await openDbFactory();
  let host: Host;
  if (typeof Bun !== "undefined") {
    const { createBunHost } = await import("../host/bun.ts");
    host = createBunHost(
      open ??
        (() => {
          throw new Error("no SQLite in this runtime");
        }),
    );
  } else
    host = createNodeHost(
      open ??
        (() => {
          throw new Error("no SQLite in this runtime");
        }),
    );
  const agentDir = resolveAgentDir(host.env, host.homedir());
  let store: SessionStore;
  let memoryNotice: string | null = null;
  const file = storeFileOf(host.env, agentDir);
  const dataDir = path.dirname(file);
  // A run's owner is alive only while it is the same process (its recorded start time), never by its PID alone.
  const isAlive = (o: RunOwner) => ownerAlive(dataDir, o);
  try {
    if (!open) throw new Error(`Node ${process.versions.node} has no node:sqlite`);
    const s = openStoreFile(open, file, { isAlive, runsTasks: true, agentDir });
    // A database this user cannot write (read-only, another user's, a full disk): this pi session's sub-agents are
    // kept in memory and in its session file, said once, rather than each call failing.
    s.checkWritable();
    store = s;
  } catch (err) {
    store = new MemoryStore({ isAlive });
    memoryNotice = `subagents: sessions are kept in memory only (${(err as Error).message}); they are still saved in this pi session.`;
  }
  const depth = depthOf(host.env);
  let owner: Promise<Owner> | null = null;
  let piCommand: ReturnType<typeof resolvePiCommand> | null = null;
  let shared: EngineShared | undefined;
  return {
    host,
    agentDir,
    store,
    dataDir,
    memoryNotice,
    depth,
    owner: () => (owner ??= startOwner(dataDir, "pi", [])),
    batchCommand: embeddedAtHand(agentDir)?.argv,
    closeOwner: () => {
      void owner?.then((o) => o.close());
      owner = null;
    },
    settingsFor: (cwd) => loadSettings(host, { agentDir, cwd }),
    profilesFor: (cwd) => discoverProfiles(host, { cwd, agentDir }),
    engineFor(cwd, settings, found, call) {
      // Chosen once per pi process, except while children run the user's newer pi as installed because its compiled
      // copy is not ready (or failed in a way a later try may fix): then each delegation looks again, so a compile
      // started by the first one is used as soon as it is ready, and one that failed is retried after its wait.
      if (piCommand && onSlowPathThatMayHeal(piCommand)) piCommand = null;
      piCommand ??= resolvePiCommand({
        env: host.env,
        cwd,
        script: process.argv[1],
        childRuntime: settings.childRuntime,
        childPi: settings.childPi,
        embedded: embeddedAtHand(agentDir),
        compile: true,
      });
      // Made once per pi process, for every call (the MCP probe knows which servers answered).
      shared ??= { mcpProbe: createMcpProbe(host.env), worktrees: createWorktreeHost(dataDir, store) };
      return buildEngine(
        {
          host,
          store,
          agentDir,
          settings,
          found,
          pi: piCommand,
          // Forwards a sandboxed child's connections when its network is closed (any subagents executable will do).
          netForwarder: embeddedAtHand(agentDir)?.argv ?? bundledExecutable(bundleDir()),
          shared,
        },
        call,
      );
    },
  };
}

function onSlowPathThatMayHeal(cmd: PiCommand): boolean {
  const state = cmd.slowPath?.state;
  if (!state || state.kind === "disabled") return false;
  return !(state.kind === "failed" && state.failure.final);
}

/**
 * The `subagents` executable children start from, however the extension was loaded: the one shipped beside this
 * bundle (a checkout's dist/, the npm package's platform executable) — the same build, so the same child protocol —
 * else the one `subagents install` recorded.
 */
function embeddedAtHand(agentDir: string) {
  return bundledEmbedded(bundleDir()) ?? installedEmbedded(runtimeDir(agentDir));
}

/** The folder of the running extension bundle (dist/ in a checkout; the package's dist/ from npm). */
function bundleDir(): string {
  return import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname);
}
