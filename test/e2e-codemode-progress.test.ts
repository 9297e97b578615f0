// A codemode script in interactive pi 1.x that delegates: pi draws the codemode call itself (its script and the
// nested calls it made), never our windows, so while the children run our extension shows their progress in a
// widget above the editor — one line per task — and removes it when the call ends.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { script } from "../src/scripted/model-server.ts";
import { cli, piCmd, piWorld, type PiWorld } from "./support/pi-env.ts";
import { hasTmux, openPane } from "./support/tmux.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
  expect((await cli(world, ["install"], { binary: true })).code).toBe(0);
});
afterAll(async () => {
  await world.close();
});

test.skipIf(!hasTmux)("interactive pi 1.x: a codemode script's delegation shows live progress, and it goes when the call ends", async () => {
  const slow = (n: string, ms: number) => `${n} ${script([{ text: `output of ${n}`, delayMs: ms }])}`;
  const tasks = [
    { name: "quick", prompt: slow("quick", 100) },
    { name: "slowpoke", prompt: slow("slowpoke", 6000) },
  ];
  const code = `const r = await tools.delegate_to_subagents({ tasks: ${JSON.stringify(tasks)} }); return r.tasks.map((t) => t.name + ":" + t.status).join(",");`;
  const prompt = `go ${script([{ tool: "codemode", args: { code } }, { text: "parent done" }])}`;
  const pane = openPane([...piCmd("current", "node"), "--tools", "+codemode"], { cols: 120, rows: 24, cwd: world.workDir, env: { ...world.env, PI_OFFLINE: "1" } });
  try {
    await pane.waitFor((s) => s.includes("fake-model"), 60_000);
    pane.keys("-l", prompt);
    for (let i = 0; i < 30 && !/slowpoke/.test(pane.screen()); i++) {
      pane.keys("Enter");
      await pane.waitFor((s) => /slowpoke/.test(s), 2000).catch(() => {});
    }
    // While the slow child runs: the quick one is done, the slow one running, each on its own line.
    const live = await pane.waitFor((s) => /✓ quick/.test(s) && /slowpoke/.test(s), 30_000);
    expect(live).toMatch(/Sub-agents: 1 running, 1 done/);
    const done = await pane.waitFor((s) => s.includes("parent done"), 60_000);
    expect(done).toContain("quick:completed,slowpoke:completed");
    expect(done).not.toMatch(/Sub-agents: \d+ running/);
  } finally {
    pane.close();
  }
}, 180_000);
