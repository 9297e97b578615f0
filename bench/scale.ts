// Scale: 64 tasks at concurrency 16 through the call runner (the same code the CLI and the extension use), in this
// process: parent RSS growth per task, every status recorded, nothing left running.
import { runWorldCall, worldEngine } from "../test/support/engine.ts";
import { benchWorld, table } from "./lib.ts";

export async function scale(): Promise<string> {
  const world = await benchWorld();
  try {
    const engine = worldEngine(world);
    const { store, host } = engine;
    Bun.gc(true);
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const poll = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const t0 = performance.now();
    const tasks = Array.from({ length: 64 }, (_, i) => ({ name: `t${i}`, prompt: `scale task ${i}` }));
    const { tasks: inputs, outcomes } = await runWorldCall(engine, tasks, { cwd: world.workDir, concurrency: 16 });
    const wall = performance.now() - t0;
    clearInterval(poll);
    const recorded = inputs.filter((t) => store.getSession(t.sessionId)?.status === "completed").length;
    const left = host.descendants(process.pid).length;
    const perTask = (peak - baseline) / 64 / 1048576;
    return [
      "### Scale: 64 tasks at concurrency 16 (one round)",
      "",
      table(
        [
          "wall",
          "completed",
          "statuses recorded",
          "parent RSS baseline → peak",
          "parent overhead per task",
          "processes left",
        ],
        [
          [
            `${(wall / 1000).toFixed(1)} s`,
            `${outcomes.filter((o) => o.result.status === "completed").length}/64`,
            `${recorded}/64`,
            `${(baseline / 1048576).toFixed(0)} → ${(peak / 1048576).toFixed(0)} MB`,
            `${perTask.toFixed(2)} MB (goal ≤ 2 MB: ${perTask <= 2 ? "met" : "missed"})`,
            String(left),
          ],
        ],
      ),
      "",
    ].join("\n");
  } finally {
    await world.close();
  }
}

if (import.meta.main) console.log(await scale());
