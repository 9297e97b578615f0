// Load: 64 real pi children at concurrency 16 through the engine the CLI and the extension share.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { runScheduled } from "../../src/core/run/scheduler.ts";
import { runTask } from "../../src/core/run/task.ts";
import { worldEngine } from "../support/engine.ts";
import { piWorld, type PiWorld } from "../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

test("64 tasks at concurrency 16: every status recorded, memory bounded, nothing left running", async () => {
  const engine = worldEngine(world);
  const { store, host } = engine;
  Bun.gc(true);
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const poll = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  let running = 0;
  let maxRunning = 0;
  const inputs = Array.from({ length: 64 }, (_, i) => ({
    name: `t${i}`,
    prompt: `load task ${i}`,
    cwd: world.workDir,
    sessionId: store.newSessionId(),
  }));
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
}, 300_000);
