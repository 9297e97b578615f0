// Load: 64 real pi children at concurrency 16 through the call runner every front uses.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { runWorldCall, worldEngine } from "../support/engine.ts";
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
  const tasks = Array.from({ length: 64 }, (_, i) => ({ name: `t${i}`, prompt: `load task ${i}` }));
  const { tasks: inputs, outcomes } = await runWorldCall(engine, tasks, {
    cwd: world.workDir,
    concurrency: 16,
    onEvent: (e) => {
      if (e.type === "taskStart") maxRunning = Math.max(maxRunning, ++running);
      if (e.type === "taskEnd") running--;
    },
  });
  clearInterval(poll);
  expect(maxRunning).toBe(16);
  expect(outcomes.map((o) => o.result.output)).toEqual(inputs.map((t) => `Done: ${t.prompt}`));
  for (const t of inputs) expect(store.getSession(t.sessionId)?.status).toBe("completed");
  expect(host.descendants(process.pid)).toEqual([]);
  expect((peak - baseline) / 64).toBeLessThan(2 * 1024 * 1024);
}, 300_000);
