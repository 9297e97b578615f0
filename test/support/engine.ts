// An in-process engine pointed at a test world (for load tests and benchmarks that bypass the CLI).
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { realClock } from "../../src/core/host.ts";
import { discoverProfiles } from "../../src/core/profiles/profile-discovery.ts";
import { loadSettings } from "../../src/core/settings.ts";
import { Store } from "../../src/core/store/store.ts";
import { createEngine, type Engine } from "../../src/core/run/engine.ts";
import { prepareCall } from "../../src/core/call/prepare.ts";
import type { CallTask } from "../../src/core/call/request.ts";
import { runCall, type CallEvent } from "../../src/core/call/runner.ts";
import { CapGuard } from "../../src/core/run/cap-guard.ts";
import type { ResolvedTask, TaskOutcome } from "../../src/core/run/task-types.ts";
import { createBunHost } from "../../src/host/bun.ts";
import { EMBEDDED_PI_VERSION } from "../../src/host/embedded-version.ts";
import { resolvePiCommand } from "../../src/host/pi-command.ts";
import { bunDbOpener } from "../../src/host/sqlite-bun.ts";
import { REPO, type PiWorld } from "./pi-env.ts";

export function worldEngine(world: PiWorld): Engine & { store: Store } {
  const host = { ...createBunHost(bunDbOpener(Database)), env: world.env };
  const { settings } = loadSettings(host, { agentDir: world.agentDir, cwd: world.workDir });
  // Children run the pi inside the built executable, as the CLI's do by default (and it is the cheapest to start).
  const embedded = {
    argv: [join(REPO, "dist", "subagents")],
    env: { SUBAGENTS_ROLE: "pi" },
    version: EMBEDDED_PI_VERSION,
    where: join(REPO, "dist", "subagents"),
  };
  const pi = resolvePiCommand({
    env: world.env,
    cwd: world.workDir,
    childRuntime: "auto",
    childPi: "embedded",
    embedded,
  });
  return createEngine({
    host,
    clock: realClock,
    store: new Store(host.openDb(world.env.SUBAGENTS_DB), { isAlive: (o) => host.isAlive(o.pid) }),
    settings,
    profiles: discoverProfiles(host, { cwd: world.workDir, agentDir: world.agentDir }).profiles,
    agentDir: world.agentDir,
    piCommand: pi.argv,
    piEnv: pi.env,
    piSettles: pi.settles,
    piDescribe: pi.describe,
    depth: 0,
  });
}

/** Runs tasks through the call module (prepare, then the call runner) on a world engine, as every front does. */
export async function runWorldCall(
  engine: Engine,
  tasks: CallTask[],
  o: { cwd: string; concurrency?: number; onEvent?: (e: CallEvent) => void },
): Promise<{ tasks: readonly ResolvedTask[]; outcomes: TaskOutcome[] }> {
  const caps = new CapGuard(undefined, "this test");
  const prepared = await prepareCall(engine, { tasks, defaults: { cwd: o.cwd }, concurrency: o.concurrency }, { caps });
  if ("refusal" in prepared) throw new Error(`refused: ${prepared.refusal.message}`);
  const ran = await runCall(engine, prepared.call, { caps, onEvent: o.onEvent });
  if ("refusal" in ran) throw new Error(`refused: ${ran.refusal.message}`);
  return { tasks: prepared.call.tasks, outcomes: ran.outcomes };
}
