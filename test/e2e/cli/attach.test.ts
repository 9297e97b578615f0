// `subagents attach ID` (issue 13) with real processes: a background supervisor and real pi children against the
// scripted model; attach from source with its output in a pipe (event lines), and the compiled binary in a tmux
// pane (the live window; Ctrl-C detaches and the run goes on).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";
import { hasTmux, openPane } from "../../support/tmux.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const background = async (prompt: string) => {
  const r = await cli(world, ["delegate", "--background", "--json", prompt]);
  expect(r.code).toBe(0);
  return r.json.find((e) => e.type === "task_background")!.sessionId as string;
};

test("attach (not a terminal) follows a background run from its start: its events, then its end and output", async () => {
  const marker = `att-${Date.now()}`;
  const id = await background(
    `attach me ${marker} ${script([{ tool: "bash", args: { command: "sleep 2; echo napped" } }, { finalize: { status: "SUCCESS", result: `attached ${marker}` } }])}`,
  );
  // Right away: the supervisor may not even listen yet.
  const a = await cli(world, ["attach", id]);
  expect(a.stderr).toBe("");
  expect(a.code).toBe(0);
  const out = a.stdout;
  // As an event line, or as a line of its window when the call had started before attach connected.
  expect(out).toContain("bash → sleep 2; echo napped");
  expect(out).toMatch(new RegExp(`✓ task-1 .*${id}`));
  expect(out).toContain(`attached ${marker}`);
  // The events come before the end.
  expect(out.indexOf("bash → sleep 2")).toBeLessThan(out.indexOf(`attached ${marker}`));
  // A finished session: its end at once.
  const t0 = performance.now();
  const again = await cli(world, ["attach", id]);
  expect(again.code).toBe(0);
  expect(again.stdout).toContain(`attached ${marker}`);
  expect(again.stdout).not.toContain("bash → sleep 2");
  expect(performance.now() - t0).toBeLessThan(15_000);
  const unknown = await cli(world, ["attach", "0123456789abcdef"]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('no session "0123456789abcdef"');
}, 120_000);

test.skipIf(!hasTmux)(
  "attach on a terminal draws the live window; Ctrl-C detaches and the run goes on",
  async () => {
    const marker = `atty-${Date.now()}`;
    const id = await background(`long ${marker} ${script([{ tool: "bash", args: { command: "sleep 60" } }])}`);
    const pane = openPane([join(REPO, "dist", "subagents"), "attach", id], {
      cols: 100,
      rows: 20,
      cwd: world.workDir,
      env: world.env,
    });
    try {
      const screen = await pane.waitFor((s) => s.includes("bash → sleep 60"), 60_000);
      expect(screen).toMatch(/^● task-1 • default/m);
      expect(screen).toMatch(/\d+s\/600s/);
      expect(screen).toContain("Ctrl-C detaches; the run goes on");
      pane.keys("C-c");
      const end = await pane.waitFor((s) => /EXIT=\d+/.test(s), 10_000);
      expect(end).toContain(`Detached from ${id}; it keeps running.`);
      expect(end).toContain("EXIT=0");
      expect(pane.cursorVisible()).toBe(true);
    } finally {
      pane.close();
    }
    const running = await cli(world, ["sessions", "--running"]);
    expect(running.stdout).toMatch(new RegExp(`^${id}  running`, "m"));
    expect((await cli(world, ["cancel", id])).code).toBe(0);
    // Once ended, attach prints the recorded end (cancelled) and exits 1.
    const after = await cli(world, ["attach", id]);
    expect(after.code).toBe(1);
    expect(after.stdout).toMatch(new RegExp(`^⊘ task-1 .*${id}`, "m"));
  },
  120_000,
);

test.skipIf(!hasTmux)(
  "attach on a terminal to a run that ends: the last frame shows its end, then its output and totals",
  async () => {
    const marker = `atend-${Date.now()}`;
    const id = await background(
      `short ${marker} ${script([{ tool: "bash", args: { command: "sleep 3" } }, { finalize: { status: "SUCCESS", result: `ended ${marker}` } }])}`,
    );
    const pane = openPane([join(REPO, "dist", "subagents"), "attach", id], {
      cols: 100,
      rows: 20,
      cwd: world.workDir,
      env: world.env,
    });
    try {
      await pane.waitFor((s) => s.includes("bash → sleep 3"), 60_000);
      const end = await pane.waitFor((s) => /EXIT=\d+/.test(s), 60_000);
      expect(end).toContain("EXIT=0");
      expect(end).toMatch(new RegExp(`✓ task-1 .*${id}`));
      expect(end).toContain(`ended ${marker}`);
      expect(end).toContain("1 completed");
      // The live frame was replaced, not left above the end.
      expect(pane.history()).not.toContain("bash → sleep 3");
    } finally {
      pane.close();
    }
  },
  120_000,
);
