// What a CLI command gathers for its engine from the environment — host, settings, profiles, store, which pi — handed
// to the one engine builder (host/engine-parts.ts).
import { Database } from "bun:sqlite";
import * as path from "node:path";
import type { Host } from "../core/host.ts";
import { agentDir as resolveAgentDir, discoverProfiles } from "../core/profiles/profile-discovery.ts";
import { loadSettings, type Settings } from "../core/settings.ts";
import type { Store } from "../core/store/store.ts";
import { storeFileOf } from "../core/store/store-types.ts";
import { openStoreFile } from "../host/open-store.ts";
import type { Engine } from "../core/run/engine.ts";
import type { WorktreeHost } from "../core/run/launch/isolation.ts";
import { createBunHost } from "../host/bun.ts";
import { bunDbOpener } from "../host/sqlite-bun.ts";
import { selfEmbedded } from "../host/embedded-pi.ts";
import { setNormalJitPolicy } from "../host/jit-policy.ts";
import { PiNotFoundError, resolvePiCommand, type PiCommand } from "../host/pi-command.ts";
import { ConfigError } from "./errors.ts";
import { slowPathNote, type SlowPathNote } from "./doctor/slow-path.ts";
import { ownerAlive } from "../control/registry.ts";
import { createWorktreeHost } from "../host/git-worktree.ts";
import { createMcpProbe } from "../host/mcp-probe.ts";
import { SCHEDULE_ENV, validScheduleName } from "../core/schedule/names.ts";
import { buildEngine as buildEngineOf, type EngineShared } from "../host/engine-parts.ts";

export type CliContext = {
  host: Host;
  agentDir: string;
  settings: Settings;
  warnings: string[];
};

export function cliContext(cwd: string): CliContext {
  const host = createBunHost(bunDbOpener(Database));
  const agentDir = resolveAgentDir(host.env, host.homedir());
  const { settings, warnings } = loadSettings(host, { agentDir, cwd });
  return { host, agentDir, settings, warnings };
}

export function dbPath(ctx: CliContext): string {
  return storeFileOf(ctx.host.env, ctx.agentDir);
}

/** Where the database lives; owner records, control sockets and background logs sit next to it. */
export function dataDir(ctx: CliContext): string {
  return path.dirname(dbPath(ctx));
}

/** The session store; `runsTasks`: this command runs tasks (it keeps room for a run's short record: open-store.ts). */
export function openStore(ctx: CliContext, runsTasks = false): Store {
  const file = dbPath(ctx);
  // A run's owner counts as alive only while it is the same process (its recorded start time).
  return openStoreFile((f) => ctx.host.openDb(f), file, {
    isAlive: (o) => ownerAlive(path.dirname(file), o),
    runsTasks,
    agentDir: ctx.agentDir,
  });
}

/** The CLI's children run the pi inside this executable unless settings or SUBAGENTS_PI say otherwise. */
export function cliPiCommand(ctx: CliContext, cwd: string, compile = false): PiCommand {
  return resolvePiCommand({
    env: ctx.host.env,
    cwd,
    moduleDir: import.meta.dir,
    childRuntime: ctx.settings.childRuntime,
    childPi: ctx.settings.childPi,
    embedded: selfEmbedded(),
    compile,
  });
}

/** Which pi children started from `cwd` run, or why none can: for `--version --verbose` and `profiles`. */
export function childPiLine(cwd: string): string {
  return childPiStatus(cwd).line;
}

/** The same, with why children run the user's pi as it is when a compiled copy would be faster (slowPathNote). */
export function childPiStatus(cwd: string): { line: string; slow?: SlowPathNote } {
  try {
    const pi = cliPiCommand(cliContext(cwd), cwd);
    return pi.slowPath ? { line: pi.describe, slow: slowPathNote(pi.slowPath) } : { line: pi.describe };
  } catch (err) {
    return { line: `none (${(err as Error).message.split("\n")[0]})` };
  }
}

/** Isolated tasks' worktrees, their runs' records told of each change (`store`). */
export const worktreeHost = (ctx: CliContext, store: Store): WorktreeHost => createWorktreeHost(dataDir(ctx), store);

export function sharedEngineParts(ctx: CliContext, store: Store): EngineShared {
  const worktrees = worktreeHost(ctx, store);
  // Worktrees a SIGKILLed owner left behind are finished while this run starts (a directory listing when none).
  void worktrees.cleanStale();
  return { mcpProbe: createMcpProbe(ctx.host.env), worktrees };
}

/** `store` and `shared`: a long-lived process (`subagents mcp`) keeps them for every call instead of one per engine. */
export function buildEngine(
  ctx: CliContext,
  cwd: string,
  store: Store = openStore(ctx, true),
  shared: EngineShared = sharedEngineParts(ctx, store),
): Engine {
  // A run follows: the parent's event loop is the long part (see cli/main.ts for why start-up holds the JIT back).
  setNormalJitPolicy();
  let pi: PiCommand;
  try {
    pi = cliPiCommand(ctx, cwd, true);
  } catch (err) {
    if (err instanceof PiNotFoundError) throw new ConfigError(err.message);
    throw err;
  }
  return buildEngineOf(
    {
      host: ctx.host,
      store,
      agentDir: ctx.agentDir,
      settings: ctx.settings,
      found: discoverProfiles(ctx.host, { cwd, agentDir: ctx.agentDir }),
      pi,
      netForwarder: selfEmbedded()?.argv,
      shared,
    },
    { schedule: scheduleOf(ctx.host.env) },
  );
}

/** The schedule a run was started for (`subagents schedule run` sets it for the command it runs). */
function scheduleOf(env: Record<string, string | undefined>): string | undefined {
  const name = env[SCHEDULE_ENV];
  return name && validScheduleName(name) ? name : undefined;
}
