// The caps as a person sees them in interactive pi (the current pi under Node 24, in tmux): a call above
// subagents.confirmAbove asks first and Esc refuses it (the model is told); while children run the footer shows
// `subagents N running · $…`, and the line is gone when they end; /subagents shows the session against its caps.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { piCmd, piWorld, priceModel, REPO, type PiWorld } from "../../support/pi-env.ts";
import { hasTmux, openPane } from "../../support/tmux.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
  priceModel(world, { input: 1000, output: 1000 });
});
afterAll(() => world.close());

const slow = (m: string, name: string) => ({
  name,
  prompt: `${m} ${name} ${script([{ tool: "bash", args: { command: "sleep 4" } }, { text: `${name} finished` }])}`,
});
// The model's answers, on a line of their own (the typed prompt holds the same words inside its script).
const STATUS = /subagents (\d+) running(?: · (\d+) queued)? · \$\d+\.\d\d/;

test.skipIf(!hasTmux)(
  "interactive pi: confirmAbove asks (Esc refuses), the footer shows running children and their spend, then clears",
  async () => {
    world.setSubagentSettings({ confirmAbove: 2, concurrency: 2, maxSpawnsPerSession: 10 });
    const m = `tui-${Date.now()}`;
    const pane = openPane([...piCmd("current", "node"), "-e", join(REPO, "dist", "extension.js")], {
      cols: 140,
      rows: 45,
      cwd: world.workDir,
      env: { ...world.env, PI_OFFLINE: "1" },
    });
    try {
      await pane.waitFor((s) => s.includes("fake-model"), 60_000);
      const three = [slow(m, "r1"), slow(m, "r2"), slow(m, "r3")];
      // Three tasks, confirmAbove 2: pi asks; Esc refuses and the model gets the refusal as the tool's result.
      pane.keys(
        "-l",
        `ask first ${script([{ tool: "delegate_to_subagents", args: { tasks: three } }, { text: "told no" }])}`,
      );
      pane.keys("Enter");
      await pane.waitFor((s) => s.includes("Start 3 sub-agents?"), 30_000);
      pane.keys("Escape");
      await pane.waitFor((s) => s.includes("Not approved: the user declined") && /^ told no$/m.test(s), 30_000);
      expect(
        world.server.requests.some(
          (q) => JSON.stringify(q.messages).includes(`${m} r1`) && !JSON.stringify(q.messages).includes("ask first"),
        ),
      ).toBe(false);

      // Three again, approved this time: two run at once, one waits; the footer counts them and their spend.
      pane.keys(
        "-l",
        `go ${script([{ tool: "delegate_to_subagents", args: { tasks: three.map((t) => ({ ...t, name: `${t.name}b`, prompt: `${t.prompt} again` })) } }, { text: "all done here" }])}`,
      );
      pane.keys("Enter");
      await pane.waitFor((s) => s.includes("Start 3 sub-agents?"), 30_000);
      pane.keys("Enter");
      const seen = new Set<string>();
      await pane.waitFor(
        (s) => /^ all done here$/m.test(s),
        90_000,
        (s) => {
          const hit = s.match(STATUS);
          if (hit) seen.add(hit[0].replace(/\$\d+\.\d\d/, "$"));
        },
      );
      expect(seen).toContain("subagents 2 running · 1 queued · $");
      expect([...seen].some((s) => s.startsWith("subagents 1 running · $"))).toBe(true);
      // Cleared once none run.
      await pane.waitFor((s) => !STATUS.test(s), 5000);

      // /subagents: the session's use against its caps (3 started: the refused call started none).
      pane.keys("/subagents");
      await pane.waitFor((s) => s.includes("/subagents"), 10_000);
      for (let i = 0; i < 30 && !pane.screen().includes("Sub-agents ·"); i++) {
        pane.keys("Enter");
        await pane.waitFor((s) => s.includes("Sub-agents ·"), 2000).catch(() => {});
      }
      const view = await pane.waitFor((s) => s.includes("This pi session:"), 10_000);
      expect(view).toMatch(/This pi session: 3\/10 sub-agents started · \$\d+\.\d\d spent \(no maxSessionCost\)/);
      pane.keys("Escape");
    } finally {
      pane.close();
      world.setSubagentSettings({});
    }
  },
  240_000,
);
