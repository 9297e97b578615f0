// The live windows in interactive pi 1.x as a person sees them: a real parent pi (current pi, Node 24) in a tmux
// pane with our extension installed by the binary; the model delegates two tasks, the windows show both done,
// and Ctrl+O expands them: every kept line, the outputs, and which pi the children ran (the embedded one).
// A codemode script that delegates is drawn by pi itself (the script and the names of its calls), never our
// windows: while its children run, our extension shows their progress in a widget above the editor — one line
// per task — and removes it when the call ends.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piCmd, piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";
import { hasTmux, openPane } from "../../support/tmux.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
  expect((await cli(world, ["install"], { binary: true })).code).toBe(0);
});
afterAll(async () => {
  await world.close();
});

test.skipIf(!hasTmux)(
  "interactive pi 1.x: windows while running, Ctrl+O expands them and names the children's pi",
  async () => {
    const piVersion = readFileSync(join(REPO, "dist", "embedded-pi.txt"), "utf8").trim();
    const child = (n: string) =>
      `${n} ${script([{ tool: "bash", args: { command: `echo line-of-${n}` } }, { text: `output of ${n}` }])}`;
    const prompt = `go ${script([
      {
        tool: "delegate_to_subagents",
        args: {
          tasks: [
            { name: "alpha", prompt: child("alpha") },
            { name: "beta", prompt: child("beta") },
          ],
        },
      },
      { text: "parent done" },
    ])}`;
    const pane = openPane(piCmd("current", "node"), {
      cols: 140,
      rows: 60,
      cwd: world.workDir,
      env: { ...world.env, PI_OFFLINE: "1" },
    });
    try {
      await pane.waitFor((s) => s.includes("fake-model"), 60_000);
      pane.keys("-l", prompt);
      // pi refuses input until its start-up has finished: submit until the turn starts.
      for (let i = 0; i < 30 && !pane.screen().includes("Sub-agents:"); i++) {
        pane.keys("Enter");
        await pane.waitFor((s) => s.includes("Sub-agents:"), 2000).catch(() => {});
      }
      const done = await pane.waitFor(
        (s) => s.includes("parent done") && /✓ alpha/.test(s) && /✓ beta/.test(s),
        60_000,
      );
      expect(done).toContain("Sub-agents: 0 running, 2 done");
      expect(done).not.toContain(`children: pi ${piVersion}`);
      pane.keys("C-o");
      const expanded = await pane.waitFor((s) => s.includes("children: pi"), 10_000);
      expect(expanded).toMatch(
        new RegExp(`children: pi ${piVersion.replace(/\./g, "\\.")} · bun \\d+\\.\\d+\\.\\d+ · embedded \\(`),
      );
      expect(expanded).toContain("output of alpha");
      expect(expanded).toContain("output of beta");
    } finally {
      pane.close();
    }
  },
  180_000,
);

test.skipIf(!hasTmux)(
  "interactive pi 1.x: a codemode script's delegation shows live progress, and it goes when the call ends",
  async () => {
    const slow = (n: string, ms: number) => `${n} ${script([{ text: `output of ${n}`, delayMs: ms }])}`;
    const tasks = [
      { name: "quick", prompt: slow("quick", 100) },
      { name: "slowpoke", prompt: slow("slowpoke", 6000) },
    ];
    const code = `const r = await tools.delegate_to_subagents({ tasks: ${JSON.stringify(tasks)} }); return r.tasks.map((t) => t.name + ":" + t.status).join(",");`;
    const prompt = `go ${script([{ tool: "codemode", args: { code } }, { text: "parent done" }])}`;
    const pane = openPane([...piCmd("current", "node"), "--tools", "+codemode"], {
      cols: 120,
      rows: 24,
      cwd: world.workDir,
      env: { ...world.env, PI_OFFLINE: "1" },
    });
    try {
      await pane.waitFor((s) => s.includes("fake-model"), 60_000);
      pane.keys("-l", prompt);
      // pi refuses input until its start-up has finished: submit until the call's widget shows (not a name: the
      // typed prompt names the tasks too, and would pass for a started call before Enter was ever pressed).
      const started = (s: string) => /Sub-agents: \d+ running/.test(s) || /✓ quick/.test(s);
      for (let i = 0; i < 30 && !started(pane.screen()); i++) {
        pane.keys("Enter");
        await pane.waitFor(started, 2000).catch(() => {});
      }
      // While the slow child runs: the quick one is done, the slow one running, each on its own line.
      const live = await pane.waitFor((s) => /✓ quick/.test(s) && /slowpoke/.test(s), 30_000);
      expect(live).toMatch(/Sub-agents: 1 running, 1 done/);
      // The script's result (text the typed prompt does not contain: its own "parent done" may still be on screen),
      // and the widget gone with the call.
      const done = await pane.waitFor(
        (s) => s.includes("quick:completed,slowpoke:completed") && !/Sub-agents: \d+ running/.test(s),
        60_000,
      );
      expect(done).toContain("quick:completed,slowpoke:completed");
      expect(done).not.toMatch(/Sub-agents: \d+ running/);
    } finally {
      pane.close();
    }
  },
  180_000,
);
