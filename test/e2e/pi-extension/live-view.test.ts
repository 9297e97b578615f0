// The live view as a pi user meets it: a real interactive pi (current pi under Node 24) with dist/extension.js in
// tmux panes small and large. While children run — told by pi's footer (`subagents N running`), which stays at the
// bottom whatever the row does — every captured frame must show our `Sub-agents:` summary and every child's header
// (or, with more children than rows, the running ones and a count of the rest). After the call the block is
// compact; Ctrl+O shows every line. Also: a stop from /subagents and an Esc abort are recorded differently, an
// ended session's window offers no steer or stop, and pi ending with a sub-agent running says what became of it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { piCmd, piWorld, REPO, until, type PiWorld } from "../../support/pi-env.ts";
import { hasTmux, openPane, type Pane } from "../../support/tmux.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
  world.setSubagentSettings({ concurrency: 4 });
});
afterAll(async () => {
  await world.close();
});

const openPi = (cols: number, rows: number): Pane =>
  openPane([...piCmd("current", "node"), "-e", join(REPO, "dist", "extension.js")], {
    cols,
    rows,
    cwd: world.workDir,
    env: { ...world.env, PI_OFFLINE: "1" },
  });

/** Types the prompt and submits it until pi has taken it (pi refuses input until its start-up has finished). */
async function submit(pane: Pane, prompt: string, started: (s: string) => boolean): Promise<void> {
  await pane.waitFor((s) => s.includes("fake-model"), 60_000);
  pane.keys("-l", prompt);
  for (let i = 0; i < 30 && !started(pane.screen()); i++) {
    pane.keys("Enter");
    await pane.waitFor(started, 2000).catch(() => {});
  }
}

/** A child that makes `calls` bash calls of ~0.3 s each, then answers. */
const busy = (name: string, calls: number) =>
  `${name} ${script([
    ...Array.from({ length: calls }, (_, i) => ({
      tool: "bash",
      args: { command: `sleep 0.3; echo ${name}-step-${i}` },
    })),
    { text: `output of ${name}\nsecond line of ${name}` },
  ])}`;

const RUNNING = /^subagents (\d+) running/m;
const headerOf = (name: string) => new RegExp(`^ ?[●○✓✗⊘↷] ${name} •`, "m");

for (const [cols, rows, count, calls] of [
  [100, 24, 4, 10],
  [140, 40, 4, 10],
  [80, 24, 16, 2],
] as const) {
  test.skipIf(!hasTmux)(
    `${cols}×${rows}, ${count} children: every frame while they run shows the summary and every header; the end is compact; Ctrl+O shows all`,
    async () => {
      const names = Array.from({ length: count }, (_, i) => `t${i}-${cols}x${rows}`);
      const tasks = names.map((n, i) => ({ name: n, prompt: busy(n, calls + (i % 4) * 2) }));
      const pane = openPi(cols, rows);
      const frames = { running: 0, bad: [] as string[], more: 0, last: "" };
      try {
        await submit(
          pane,
          `go ${script([{ tool: "delegate_to_subagents", args: { tasks } }, { text: "parent done" }])}`,
          (s) => s.includes("Sub-agents:"),
        );
        const end = await pane.waitFor(
          (s) => /^ parent done$/m.test(s),
          180_000,
          (s) => {
            if (!RUNNING.test(s)) return;
            frames.running++;
            const missing = names.filter((n) => !headerOf(n).test(s));
            const counted = /^ ?… (\d+) more: /m.exec(s);
            if (counted) frames.more++;
            // The summary always; every header, or (more children than rows) all but the counted ones.
            const ok =
              /^ ?Sub-agents: \d+ running/m.test(s) &&
              (missing.length === 0 || (counted !== null && missing.length <= Number(counted[1])));
            // A frame is judged once it has settled (the same screen at two captures): on a loaded machine a capture
            // can fall between the writes of one of pi's redraws, half the old frame above half the new one.
            if (!ok && s === frames.last && frames.bad.length < 3) frames.bad.push(s);
            frames.last = s;
          },
        );
        expect(frames.bad, `frames without the summary or a header:\n${frames.bad.join("\n-----\n")}`).toEqual([]);
        expect(frames.running).toBeGreaterThan(5);
        if (count > rows) expect(frames.more).toBeGreaterThan(0);
        // Ended: a line per task, the outputs' first lines when there is room, no activity lines. (pi keeps no
        // scrollback in the pane: what is above its view is not there to read.)
        expect(end).not.toMatch(/-step-\d+$/m);
        expect(end).toMatch(headerOf(names.at(-1)!));
        expect(end).toContain("Sessions: ");
        if (count === 4) {
          expect(end).toMatch(new RegExp(`^ ?Sub-agents: 0 running, ${count} done`, "m"));
          for (const n of names) expect(end).toContain(`→ output of ${n}`);
        }
        // Ctrl+O: every kept line and the outputs in full (the last window's first step, where the rows show it).
        pane.keys("C-o");
        const all = await pane.waitFor((s) => s.includes("── output ──") && s.includes("children: pi "), 10_000);
        if (rows >= 40) expect(all).toContain(`echo ${names.at(-1)}-step-0`);
      } finally {
        pane.close();
      }
    },
    300_000,
  );
}

const runOf = (prompt: string) => {
  const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
  try {
    return db
      .query(
        "SELECT s.id AS id, r.status AS status, r.error AS error FROM runs r JOIN sessions s ON s.id = r.session_id WHERE r.prompt LIKE ? ORDER BY r.id DESC LIMIT 1",
      )
      .get(`${prompt}%`) as { id: string; status: string; error: string | null } | null;
  } finally {
    db.close();
  }
};

test.skipIf(!hasTmux)(
  '60×24: /subagents stops one ("Stopped from /subagents"), Esc aborts another ("Cancelled: the tool call was aborted"), pi ending with one running says so',
  async () => {
    const m = `stops-${Date.now()}`;
    const long = (name: string) => ({
      name,
      prompt: `${m} ${name} ${script([{ tool: "bash", args: { command: "sleep 60" } }])}`,
    });
    const pane = openPi(60, 24);
    try {
      await submit(
        pane,
        `bg ${script([{ tool: "delegate_to_subagents", args: { tasks: [long("stopme"), long("keepme")], background: true } }, { text: "started them" }])}`,
        (s) => s.includes("started in the background"),
      );
      await pane.waitFor((s) => /^ started them$/m.test(s), 60_000);
      await until(
        "both children running",
        () => runOf(`${m} stopme`)?.status === "running" && runOf(`${m} keepme`)?.status === "running",
        60_000,
      );
      const stopId = runOf(`${m} stopme`)!.id;

      // /subagents at 60 columns: the keys whole on their own line, every id whole.
      pane.keys("/subagents");
      await pane.waitFor((s) => s.includes("/subagents"), 10_000);
      for (let i = 0; i < 30 && !pane.screen().includes("Sub-agents ·"); i++) {
        pane.keys("Enter");
        await pane.waitFor((s) => s.includes("Sub-agents ·"), 2000).catch(() => {});
      }
      const list = await pane.waitFor((s) => /● stopme .*running/.test(s) && /● keepme .*running/.test(s), 30_000);
      expect(list).toContain("↑↓ select · Enter open · s steer · x stop · Esc close");
      expect(list).toMatch(new RegExp(`stopme .*${stopId}$`, "m"));
      // Stop it from the list: recorded as stopped from /subagents.
      const rows = list.split("\n").filter((l) => /^[▸ ] [●○✓✗⊘] /.test(l));
      const at = rows.findIndex((l) => l.slice(4).startsWith("stopme "));
      const cursor = rows.findIndex((l) => l.startsWith("▸"));
      for (let i = 0; i < Math.abs(at - cursor); i++) pane.keys(at > cursor ? "Down" : "Up");
      await pane.waitFor((s) => /^▸ . stopme /m.test(s), 5000);
      pane.keys("x");
      await pane.waitFor((s) => s.includes("Stop stopme?"), 10_000);
      pane.keys("Enter");
      await until("stopme to end", () => runOf(`${m} stopme`)?.status !== "running", 30_000);
      expect(runOf(`${m} stopme`)).toMatchObject({ status: "error", error: "Stopped from /subagents" });
      // Its window, now ended: no steer or stop offered.
      await pane.waitFor((s) => /⊘ stopme /.test(s), 15_000);
      pane.keys("Enter");
      const ended = await pane.waitFor((s) => s.includes("Sub-agents › stopme"), 10_000);
      expect(ended).toContain("Esc back");
      expect(ended).not.toContain("s steer");
      pane.keys("Escape");
      await pane.waitFor((s) => s.includes("Sub-agents ·"), 10_000);
      pane.keys("Escape");
      await pane.waitFor((s) => !s.includes("Sub-agents ·"), 10_000);

      // A delegation in the foreground, aborted with Esc: recorded as an aborted call, not a stop.
      pane.keys(
        "-l",
        `fg ${script([{ tool: "delegate_to_subagents", args: { tasks: [long("escme")] } }, { text: "after esc" }])}`,
      );
      pane.keys("Enter");
      await until("escme to run", () => runOf(`${m} escme`)?.status === "running", 60_000);
      await pane.waitFor((s) => /● escme/.test(s), 30_000);
      pane.keys("Escape");
      await until("escme to end", () => runOf(`${m} escme`)?.status !== "running", 30_000);
      expect(runOf(`${m} escme`)).toMatchObject({ status: "error", error: "Cancelled: the tool call was aborted" });

      // pi ends while keepme still runs: the line after pi's last frame says it was stopped.
      await pane.waitFor((s) => /^ ?subagents 1 running/m.test(s), 30_000);
      pane.keys("-l", "/quit");
      pane.keys("Enter");
      const after = await pane.waitFor((s) => s.includes("EXIT="), 60_000);
      expect(after.replace(/\n/g, "")).toContain(
        "subagents: pi ended with 1 sub-agent running; stopped and recorded as interrupted",
      );
      expect(runOf(`${m} keepme`)?.error).toBe("Session was interrupted (main agent session ended)");
    } finally {
      pane.close();
    }
  },
  300_000,
);

test.skipIf(!hasTmux)(
  "Ctrl-C twice during a delegation in the foreground: after pi's last frame (still showing them running) a line says they were stopped",
  async () => {
    const m = `quit-${Date.now()}`;
    const tasks = ["q1", "q2", "q3", "q4"].map((n) => ({
      name: n,
      prompt: `${m} ${n} ${script([{ tool: "bash", args: { command: "sleep 60" } }])}`,
    }));
    const pane = openPi(100, 30);
    try {
      await submit(pane, `fg ${script([{ tool: "delegate_to_subagents", args: { tasks } }, { text: "never" }])}`, (s) =>
        s.includes("Sub-agents:"),
      );
      await pane.waitFor(
        (s) => /Sub-agents: 4 running/.test(s) && (s.match(/bash → sleep 60/g) ?? []).length === 4,
        60_000,
      );
      pane.keys("C-c");
      pane.keys("C-c");
      const after = (await pane.waitFor((s) => s.includes("EXIT="), 60_000)).replace(/\n/g, "");
      expect(after).toContain(
        "subagents: 4 sub-agents stopped just before pi ended (their delegation aborted) and recorded as cancelled (/subagents lists them).",
      );
      for (const n of ["q1", "q2", "q3", "q4"])
        expect(runOf(`${m} ${n}`)).toMatchObject({ status: "error", error: "Cancelled: the tool call was aborted" });
    } finally {
      pane.close();
    }
  },
  120_000,
);
