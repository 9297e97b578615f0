// Scale: 64 tasks at concurrency 16 through the engine (the same code the CLI and the extension use), in this
// process: parent RSS growth per task, every status recorded, nothing left running.
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { realClock } from "../src/core/host.ts";
import { discoverProfiles } from "../src/core/profile-discovery.ts";
import { runScheduled } from "../src/core/scheduler.ts";
import { loadSettings } from "../src/core/settings.ts";
import { Store } from "../src/core/store.ts";
import { runTask, type Engine } from "../src/core/task.ts";
import { createBunHost } from "../src/host/bun.ts";
import { resolvePiCommand } from "../src/host/pi-command.ts";
import { bunDbOpener } from "../src/host/sqlite-bun.ts";
import { benchWorld, REPO, table } from "./lib.ts";

export async function scale(): Promise<string> {
  const world = await benchWorld();
  try {
    for (const [k, v] of Object.entries(world.env)) process.env[k] = v;
    const host = createBunHost(bunDbOpener(Database));
    const { settings } = loadSettings(host, { agentDir: world.agentDir, cwd: world.workDir });
    const pi = resolvePiCommand({ env: host.env, cwd: world.workDir, moduleDir: import.meta.dir, childRuntime: "bun" });
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
    const t0 = performance.now();
    const inputs = Array.from({ length: 64 }, (_, i) => ({ name: `t${i}`, prompt: `scale task ${i}`, cwd: world.workDir, sessionId: store.newSessionId() }));
    const outcomes = await runScheduled(inputs, 16, (input, hooks) => runTask(engine, input, hooks));
    const wall = performance.now() - t0;
    clearInterval(poll);
    const recorded = inputs.filter((t) => store.getSession(t.sessionId)?.status === "completed").length;
    const left = host.descendants(process.pid).length;
    const perTask = (peak - baseline) / 64 / 1048576;
    return [
      "### Scale: 64 tasks at concurrency 16 (one round)",
      "",
      table(
        ["wall", "completed", "statuses recorded", "parent RSS baseline → peak", "parent overhead per task", "processes left"],
        [[`${(wall / 1000).toFixed(1)} s`, `${outcomes.filter((o) => o.result.status === "completed").length}/64`, `${recorded}/64`, `${(baseline / 1048576).toFixed(0)} → ${(peak / 1048576).toFixed(0)} MB`, `${perTask.toFixed(2)} MB (goal ≤ 2 MB: ${perTask <= 2 ? "met" : "missed"})`, String(left)]],
      ),
      "",
    ].join("\n");
  } finally {
    await world.close();
  }
}

if (import.meta.main) console.log(await scale());
