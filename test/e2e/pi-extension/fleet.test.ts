// /subagents as a person uses it (issue 13): a real interactive parent pi (current pi under Node 24 and under Bun)
// with dist/extension.js in a tmux pane, two background sub-agents started from the CLI (so owned by a
// supervisor, not by this pi): the fleet view lists them live, opens one's window, steers it (the child acts on
// the message), and stops the other (recorded as cancelled).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piCmd, piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";
import { hasTmux, openPane, type Pane } from "../../support/tmux.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

/**
 * Moves the fleet view's cursor (▸) to the row of session `id` (every row ends with its id; names repeat across
 * the runtimes' tests). The list refreshes every second and may reorder under the keys: move, look again.
 */
async function selectRow(pane: Pane, id: string): Promise<void> {
  await pane.waitFor((screen) => {
    const rows = screen.split("\n").filter((l) => /^[▸ ] [●○✓✗⊘] /.test(l));
    const at = rows.findIndex((l) => l.endsWith(id));
    const cursor = rows.findIndex((l) => l.startsWith("▸"));
    if (at < 0 || cursor < 0) return false;
    if (at === cursor) return true;
    pane.keys(at > cursor ? "Down" : "Up");
    return false;
  }, 10_000);
}

/** A parent pi (this runtime, our extension) in a tmux pane of `rows` rows, with /subagents open. */
async function openFleet(runtime: "node" | "bun", rows: number): Promise<Pane> {
  const pane = openPane([...piCmd("current", runtime), "-e", join(REPO, "dist", "extension.js")], {
    cols: rows > 20 ? 120 : 100,
    rows,
    cwd: world.workDir,
    env: { ...world.env, PI_OFFLINE: "1" },
  });
  try {
    await pane.waitFor((s) => s.includes("fake-model"), 60_000);
    pane.keys("/subagents");
    await pane.waitFor((s) => s.includes("/subagents"), 10_000);
    // pi draws its footer before its start-up has finished, and refuses a command until then ("Startup is
    // still in progress", the text stays in the editor): submit until the view opens.
    for (let i = 0; i < 30 && !pane.screen().includes("Sub-agents ·"); i++) {
      pane.keys("Enter");
      await pane.waitFor((s) => s.includes("Sub-agents ·"), 2000).catch(() => {});
    }
    return pane;
  } catch (err) {
    pane.close();
    throw err;
  }
}

for (const runtime of (process.env.ONLY_RT ? [process.env.ONLY_RT] : ["node", "bun"]) as ("node" | "bun")[]) {
  test.skipIf(!hasTmux)(
    `/subagents under ${runtime} pi: live fleet of CLI background runs; open one's window, steer it, stop another`,
    async () => {
      const marker = `fleet-${runtime}-${Date.now()}`;
      const steered = `steered ${marker}`;
      const r = await cli(world, [
        "delegate",
        "--background",
        "--json",
        "--name",
        "steerme",
        "--name",
        "stopme",
        `steer target ${marker} ${script([{ tool: "bash", args: { command: "sleep 6" } }, { finalize: { status: "SUCCESS", result: `not steered ${marker}` } }])}`,
        `stop target ${marker} ${script([{ tool: "bash", args: { command: "sleep 60" } }])}`,
      ]);
      const [steerId, stopId] = r.json.filter((e) => e.type === "task_background").map((e) => e.sessionId as string);
      const pane = await openFleet(runtime, 40);
      try {
        // Both live, with their owner: the CLI's background supervisor.
        const list = await pane.waitFor(
          (s) => /● steerme .*running .*supervisor \d+/.test(s) && /● stopme .*running .*supervisor \d+/.test(s),
          60_000,
        );
        expect(list).toContain(steerId);
        expect(list).toContain(stopId);

        // Its window, live through its owner: the bash call in progress.
        await selectRow(pane, steerId);
        pane.keys("Enter");
        await pane.waitFor((s) => s.includes("Sub-agents › steerme") && s.includes("bash → sleep 6"), 30_000);
        // The steer typed at once after `s`, as a person types: every key reaches the view's prompt (none falls into
        // pi's editor, whose Enter would send them to the parent's model).
        const parentRequests = world.server.requests.length;
        pane.keys("s");
        pane.keys("-l", `Change of plan ${script([{ finalize: { status: "SUCCESS", result: steered } }])}`);
        pane.keys("Enter");
        // Delivered at the child's next turn boundary (after its bash call); the view stays on its window.
        await pane.waitFor((s) => s.includes(`Steer delivered to steerme (${steerId})`), 30_000);
        const w = await cli(world, ["wait", steerId, "--json"]);
        expect(w.json.at(-1)!.tasks[0]).toMatchObject({ status: "completed", output: steered });
        await pane.waitFor((s) => /✓ steerme/.test(s), 10_000);
        expect(
          world.server.requests.slice(parentRequests).filter((q) => JSON.stringify(q).includes("Change of plan")),
        ).toHaveLength(1);

        // Back to the list; stop the other one.
        pane.keys("Escape");
        await pane.waitFor((s) => s.includes("Sub-agents ·") && /✓ steerme .*completed/.test(s), 10_000);
        await selectRow(pane, stopId);
        pane.keys("x");
        await pane.waitFor((s) => s.includes("Stop stopme?"), 10_000);
        pane.keys("Enter");
        await pane.waitFor((s) => s.includes(`Stopping stopme (${stopId})`), 10_000);
        const c = await cli(world, ["wait", stopId, "--json"]);
        expect(c.json.at(-1)!.tasks[0]).toMatchObject({ status: "error", errorCode: "SUBAGENT_CANCELLED" });
        pane.keys("Escape");
      } finally {
        pane.close();
        // A failure above leaves a background run going: it ends with the test.
        await cli(world, ["cancel", steerId, stopId]);
      }
    },
    240_000,
  );
}

test.skipIf(!hasTmux)(
  "/subagents in a short terminal: the list fits the screen, its title stays in sight, and the cursor scrolls it",
  async () => {
    const marker = `short-${Date.now()}`;
    const names = Array.from({ length: 14 }, (_, i) => `row${String(i + 1).padStart(2, "0")}-${marker}`);
    const r = await cli(world, ["delegate", ...names.flatMap((n) => ["--name", n]), ...names.map((n) => `say ${n}`)]);
    expect(r.code, r.stderr).toBe(0);
    const pane = await openFleet("node", 16);
    try {
      // The picked row (the first) and the title in sight; the rows that do not fit are counted, not pushed off.
      const first = await pane.waitFor((s) => s.includes("Sub-agents ·") && /↓ \d+ more/.test(s), 10_000);
      expect(first, first).toMatch(/^▸ [●○✓✗⊘] /m);
      expect(first).toContain("fake-model"); // pi's footer is still on the screen under the view
      expect(first).not.toMatch(/↑ \d+ more/);
      // To the end of the list (the cursor stops at the last row): the list scrolled with it, the title stayed.
      for (let i = 0; i < 20; i++) pane.keys("Down");
      const last = await pane.waitFor((s) => !/↓ \d+ more/.test(s) && /↑ \d+ more/.test(s), 10_000);
      const lines = last.split("\n");
      const cursor = lines.findIndex((l) => l.startsWith("▸ "));
      expect(lines[cursor + 1], last).toStartWith("This pi session:");
      expect(last).toContain("Sub-agents ·");
      expect(last).toContain("fake-model");
      pane.keys("Escape");
    } finally {
      pane.close();
    }
  },
  180_000,
);
