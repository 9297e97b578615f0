// Load: 64 real pi children at concurrency 16 through the engine the CLI and the extension share.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { realClock } from "../../src/core/host.ts";
import { discoverProfiles } from "../../src/core/profile-discovery.ts";
import { runScheduled } from "../../src/core/scheduler.ts";
import { loadSettings } from "../../src/core/settings.ts";
import { Store } from "../../src/core/store.ts";
import { runTask, type Engine } from "../../src/core/task.ts";
import { createBunHost } from "../../src/host/bun.ts";
import { resolvePiCommand } from "../../src/host/pi-command.ts";
import { bunDbOpener } from "../../src/host/sqlite-bun.ts";
import { piWorld, REPO, type PiWorld } from "../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

test("64 tasks at concurrency 16: every status recorded, memory bounded, nothing left running", async () => {
  const host = { ...createBunHost(bunDbOpener(Database)), env: world.env };
  const { settings } = loadSettings(host, { agentDir: world.agentDir, cwd: world.workDir });
  const pi = resolvePiCommand({ env: world.env, cwd: world.workDir, moduleDir: import.meta.dir, childRuntime: "bun" });
  const store = new Store(host.openDb(world.env.SUBAGENTS_DB), { isAlive: (p) => host.isAlive(p) });
  const engine: Engine = {
    host,
    clock: realClock,
    store,
    settings,
    profiles: discoverProfiles(host, { cwd: world.workDir, agentDir: world.agentDir }).profiles,
    agentDir: world.agentDir,
    piCommand: pi.argv,
    piEnv: pi.env,
    childExtension: join(REPO, "dist", "child.js"),
    depth: 0,
  };
  Bun.gc(true);
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const poll = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  let running = 0;
  let maxRunning = 0;
  const inputs = Array.from({ length: 64 }, (_, i) => ({ name: `t${i}`, prompt: `load task ${i}`, cwd: world.workDir, sessionId: store.newSessionId() }));
  const outcomes = await runScheduled(inputs, 16, (input, hooks) => runTask(engine, input, hooks), {
    onTaskStart: () => (maxRunning = Math.max(maxRunning, ++running)),
    onTaskEnd: () => running--,
  });
  clearInterval(poll);
  expect(maxRunning).toBe(16);
  expect(outcomes.map((o) => o.result.output)).toEqual(inputs.map((t) => `Done: ${t.prompt}`));
  for (const t of inputs) expect(store.getSession(t.sessionId)?.status).toBe("completed");
  expect(host.descendants(process.pid)).toEqual([]);
  expect((peak - baseline) / 64).toBeLessThan(2 * 1024 * 1024);
}, 120_000);
