// The live display as a person sees it: the compiled binary in a real tmux pane (see support/tmux.ts), with real
// pi children against the scripted model. Screens are sampled every ~40 ms for the whole run, so "every frame"
// below means every sample.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { spawnSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Store } from "../../../src/core/store/store.ts";
import { emptyUsage } from "../../../src/core/types.ts";
import { bunDbOpener } from "../../../src/host/sqlite-bun.ts";
import { script } from "../../../src/scripted/model-server.ts";
import { piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";
import { hasTmux, openPane, type Pane } from "../../support/tmux.ts";

const BIN = join(REPO, "dist", "subagents");
let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

/** A task that streams a few lines, runs a command, and finishes: enough body to overflow a small terminal. */
const busy = (i: number, sleep = 1.5) =>
  `busy task ${i} ${script([
    {
      text: Array.from({ length: 6 }, (_, k) => `thinking ${i}.${k}`).join("\n"),
      tool: "bash",
      args: { command: `for k in 1 2 3 4 5 6 7 8; do echo out $k; done; sleep ${sleep}` },
    },
    { finalize: { status: "SUCCESS", result: `result of ${i}` } },
  ])}`;

const headerOf = (screen: string, name: string) =>
  screen.split("\n").find((l) => new RegExp(`^[●○✓✗⊘] ${name} •`).test(l));
const EXITED = (s: string) => /EXIT=\d+/.test(s);
const exitCode = (s: string) => Number(/EXIT=(\d+)/.exec(s)?.[1]);

async function withPane(
  argv: string[],
  o: { cols: number; rows: number; clear?: boolean },
  body: (p: Pane) => Promise<void>,
): Promise<void> {
  const pane = openPane([BIN, ...argv], { ...o, cwd: world.workDir, env: world.env });
  try {
    await body(pane);
  } finally {
    pane.close();
  }
}

/** Samples the whole run; every sample that shows a frame must show every task's header. */
async function everyFrameShowsAllHeaders(pane: Pane, names: string[], ms: number): Promise<number> {
  let frames = 0;
  const missing: string[] = [];
  await pane.waitFor(EXITED, ms, (s) => {
    if (!s.includes("Sub-agents:") || EXITED(s)) return;
    frames++;
    for (const n of names) if (!headerOf(s, n)) missing.push(`${n} missing from:\n${s}`);
  });
  expect(missing.slice(0, 1)).toEqual([]);
  return frames;
}

test.skipIf(!hasTmux)(
  "8 tasks on 120×24: all 8 headers in every frame, one frame in the scrollback, totals at the end",
  async () => {
    const names = Array.from({ length: 8 }, (_, i) => `task-${i + 1}`);
    await withPane(
      ["delegate", "--concurrency", "8", ...names.map((_, i) => busy(i))],
      { cols: 120, rows: 24, clear: true },
      async (pane) => {
        const frames = await everyFrameShowsAllHeaders(pane, names, 90_000);
        expect(frames).toBeGreaterThan(5);
        const screen = pane.screen();
        expect(exitCode(screen)).toBe(0);
        expect(screen).toMatch(/^8 completed · \d+\.\ds$/m);
        expect(pane.cursorVisible()).toBe(true);
        // Redraws overwrite their own rows: the scrollback holds one frame, not one per redraw (ESC[J at home would).
        const history = pane.history();
        expect(history.match(/Sub-agents:/g)?.length).toBe(1);
        expect(history).not.toContain("s/600s");
      },
    );
  },
  120_000,
);

test.skipIf(!hasTmux)(
  "16 tasks on 120×40: all 16 headers in every frame (queued ones included)",
  async () => {
    const names = Array.from({ length: 16 }, (_, i) => `task-${i + 1}`);
    await withPane(
      ["delegate", "--concurrency", "6", ...names.map((_, i) => busy(i, 0.5))],
      { cols: 120, rows: 40 },
      async (pane) => {
        await everyFrameShowsAllHeaders(pane, names, 150_000);
        expect(exitCode(pane.screen())).toBe(0);
      },
    );
  },
  180_000,
);

/** Lines wider than `cols`, and running headers that lost their elapsed/timeout, in every sample until exit. */
async function checkWidth(
  pane: Pane,
  cols: number,
  names: string[],
  seen = /^$/,
): Promise<{ wide: string[]; noClock: string[]; twoFrames: string[]; seen: boolean }> {
  const found = { wide: [] as string[], noClock: [] as string[], twoFrames: [] as string[], seen: false };
  await pane.waitFor(EXITED, 60_000, (s) => {
    if (EXITED(s)) return;
    found.seen ||= seen.test(s);
    for (const l of s.split("\n")) if ([...l].length > cols) found.wide.push(l);
    if ((s.match(/Sub-agents:/g)?.length ?? 0) > 1) found.twoFrames.push(s);
    for (const n of names) {
      const h = headerOf(s, n.slice(0, 10));
      if (h?.startsWith("●") && !/\d+s\/600s/.test(h)) found.noClock.push(h);
    }
  });
  return found;
}

const NAMES = ["first-task-with-a-long-name", "second", "third", "fourth"];
const named = (sleep: number) => [
  ...NAMES.flatMap((n) => ["--name", n]),
  "--profile",
  "scout",
  ...NAMES.map((_, i) => busy(i, sleep)),
];

test.skipIf(!hasTmux)(
  "60×20: no line wider than 60; running headers keep elapsed/timeout and drop the model first",
  async () => {
    await withPane(["delegate", ...named(1.5)], { cols: 60, rows: 20 }, async (pane) => {
      const found = await checkWidth(
        pane,
        60,
        NAMES,
        /^● second • scout • \d+ tools? • \d+s\/600s( • \d+ turns?)?( • ↑\S+ ↓\S+)?$/m,
      );
      expect(found).toEqual({ wide: [], noClock: [], twoFrames: [], seen: true });
      expect(exitCode(pane.screen())).toBe(0);
    });
  },
  120_000,
);

test.skipIf(!hasTmux)(
  "narrowing the terminal mid-run (120 → 60 columns) redraws cleanly: one frame on the screen in every sample",
  async () => {
    await withPane(["delegate", ...named(4)], { cols: 120, rows: 40, clear: true }, async (pane) => {
      // Resize in a quiet moment (every task inside its `sleep`, just after the clock ticked): a frame still
      // unread in the pty when tmux re-wraps the screen would be drawn against the wrong layout, which no
      // program can prevent. With the frame drawn and read, the redraw must leave nothing behind.
      const before = await pane.waitFor((s) => s.match(/bash → for k/g)?.length === 4, 60_000);
      await pane.waitFor((s) => s !== before, 2_000);
      pane.resize(60, 40);
      const found = await checkWidth(pane, 60, NAMES);
      expect({ ...found, seen: true }).toEqual({ wide: [], noClock: [], twoFrames: [], seen: true });
      // tmux itself may push rows that re-wrapping grew above the cursor into the scrollback: only the screen is ours.
      const screen = pane.screen();
      expect(screen.match(/Sub-agents:/g)?.length).toBe(1);
      expect(screen).not.toContain("s/600s");
      for (const l of screen.split("\n")) expect([...l].length).toBeLessThanOrEqual(60);
    });
  },
  120_000,
);

const pidsMatching = (needle: string) =>
  spawnSync("pgrep", ["-f", `^${needle}`], { encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean);

/** The final frame after an interrupt: both tasks, the interrupted one in its own state (not an error). */
function expectInterruptedFrame(screen: string): void {
  expect(exitCode(screen)).toBe(130);
  expect(screen).toContain("Sub-agents: 0 running, 1 done, 1 cancelled");
  expect(headerOf(screen, "hangs")).toStartWith("⊘ hangs");
  expect(headerOf(screen, "quick")).toStartWith("✓ quick");
  expect(screen).toContain("  cancelled");
  expect(screen).toMatch(/^1 completed, 1 cancelled · \d+\.\ds$/m);
}

test.skipIf(!hasTmux)(
  "Ctrl-C twice, back to back, with real pi children in `sleep 60`: exit 130, nothing left, cursor visible, final frame complete",
  async () => {
    const tag = `${Date.now() % 100000}${Math.floor(Math.random() * 100)}`;
    const hang = `hang ${script([{ tool: "bash", args: { command: `sleep 60${tag}` } }])}`;
    const quick = `quick ${script([{ finalize: { status: "SUCCESS", result: "quick result" } }])}`;
    await withPane(
      ["delegate", "--name", "hangs", "--name", "quick", hang, quick],
      { cols: 100, rows: 24 },
      async (pane) => {
        await pane.waitFor((s) => /✓ quick/.test(s) && /bash → sleep/.test(s), 60_000);
        for (let i = 0; i < 50 && pidsMatching(`sleep 60${tag}`).length === 0; i++) await Bun.sleep(100);
        expect(pidsMatching(`sleep 60${tag}`).length).toBeGreaterThan(0);
        pane.keys("C-c", "C-c");
        const screen = await pane.waitFor(EXITED, 5_000);
        expect(pane.cursorVisible()).toBe(true);
        expectInterruptedFrame(screen);
        expect(pidsMatching(`sleep 60${tag}`)).toEqual([]);
      },
    );
  },
  90_000,
);

test.skipIf(!hasTmux)(
  'second Ctrl-C while a child ignores SIGTERM: "stopping…", then every process killed at once',
  async () => {
    const tag = `${Date.now() % 100000}${Math.floor(Math.random() * 100)}`;
    // A pi that finishes the "quick" task, and for the other one ignores SIGTERM (the first stop would wait out its
    // 5 s grace period) with a grandchild in a session of its own, like pi's bash tool. Events go to fd 3.
    const ev = (o: unknown) => `'${JSON.stringify(o)}'`;
    const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, cost: 0 };
    const fake = join(world.root, `stubborn-pi-${tag}.sh`);
    writeFileSync(
      fake,
      [
        "#!/bin/sh",
        // The task's first line: the rest of stdin names the siblings (the team note), this one's too.
        "task=$(cat | head -n 1)",
        `case "$task" in *quick*) printf '%s\\n' ${ev({ type: "assistant", text: "quick result", toolCalls: [], usage, stopReason: "stop" })} ${ev({ type: "finalize", payload: { status: "SUCCESS", result: "quick result" } })} ${ev({ type: "agent_end" })} >&3; exit 0;; esac`,
        "trap '' TERM",
        `printf '%s\\n' ${ev({ type: "tool_start", id: "t1", name: "bash", args: JSON.stringify({ command: `sleep 60${tag}` }) })} >&3`,
        `setsid sleep 60${tag} &`,
        "while true; do sleep 1; done",
      ].join("\n"),
    );
    chmodSync(fake, 0o755);
    const pane = openPane([BIN, "delegate", "--name", "hangs", "--name", "quick", "hang", "quick"], {
      cols: 100,
      rows: 24,
      cwd: world.workDir,
      env: { ...world.env, SUBAGENTS_PI: fake },
    });
    try {
      await pane.waitFor((s) => /✓ quick/.test(s) && /bash → sleep/.test(s), 30_000);
      for (let i = 0; i < 50 && pidsMatching(`sleep 60${tag}`).length === 0; i++) await Bun.sleep(100);
      expect(pidsMatching(`sleep 60${tag}`).length).toBeGreaterThan(0);
      pane.keys("C-c");
      await pane.waitFor((s) => s.includes("stopping… press Ctrl-C again to force"), 20_000);
      await Bun.sleep(300);
      expect(EXITED(pane.screen())).toBe(false);
      pane.keys("C-c");
      const started = Date.now();
      const screen = await pane.waitFor(EXITED, 20_000);
      // At once: well before the 5 s grace period the first Ctrl-C would have waited out.
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(pane.cursorVisible()).toBe(true);
      // A forced stop ends with the same frame and totals as one that ran its course.
      expectInterruptedFrame(screen);
      expect(pidsMatching(`sleep 60${tag}`)).toEqual([]);
    } finally {
      pane.close();
    }
  },
  60_000,
);

test.skipIf(!hasTmux)(
  "demo interrupted by Ctrl-C exits 130 and does not claim to have finished",
  async () => {
    await withPane(["demo"], { cols: 100, rows: 30 }, async (pane) => {
      await pane.waitFor((s) => s.includes("Sub-agents: 4 running"), 60_000);
      pane.keys("C-c");
      const screen = await pane.waitFor(EXITED, 20_000);
      expect(exitCode(screen)).toBe(130);
      expect(screen).not.toContain("DEMO finished");
      expect(screen).toContain("cancelled");
    });
  },
  90_000,
);

test.skipIf(!hasTmux)(
  "sessions at 60 columns: a header row, no line wider than 60, ids whole",
  async () => {
    const store = new Store(bunDbOpener(Database)(world.env.SUBAGENTS_DB), { isAlive: () => true });
    const id = store.newSessionId();
    store.createSession({
      id,
      name: "a session name far too long for a sixty column terminal, really",
      agent: "reviewer",
      cwd: world.workDir,
    });
    const run = store.startRun(id, { prompt: "p", ownerPid: process.pid });
    store.finishRun(run, {
      status: "completed",
      output: "o",
      usage: { ...emptyUsage(), cost: 0.5 },
      exitCode: 0,
      toolCount: 0,
      messages: [],
      stderrTail: "",
      durationMs: 1,
    });
    await withPane(["sessions", "--limit", "5"], { cols: 60, rows: 20 }, async (pane) => {
      const screen = await pane.waitFor(EXITED, 10_000);
      const lines = screen.split("\n").filter((l) => l && !l.startsWith("EXIT="));
      expect(lines[0]).toMatch(/^ID +STATUS +AGENT +UPDATED +NAME$/);
      expect(lines.find((l) => l.startsWith(id))).toMatch(
        new RegExp(`^${id}  completed  reviewer +\\d+s ago  a session.*…$`),
      );
      for (const l of lines) expect([...l].length).toBeLessThanOrEqual(60);
    });
  },
  30_000,
);

test.skipIf(!hasTmux)(
  "run AGENT - on a terminal says it reads the task from standard input",
  async () => {
    await withPane(["run", "scout", "-"], { cols: 100, rows: 10 }, async (pane) => {
      await pane.waitFor((s) => s.includes("Reading the task from standard input; finish with Ctrl-D."), 10_000);
      pane.keys("C-d");
      const screen = await pane.waitFor(EXITED, 10_000);
      expect(screen).toContain("run: the task is empty.");
      expect(exitCode(screen)).toBe(2);
    });
  },
  30_000,
);
