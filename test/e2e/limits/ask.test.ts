// Children that ask (docs/limits.md): real pi children whose own extension asks ctx.ui.confirm, and the ask_parent
// tool, answered by nobody (headless), by the CLI's terminal, by a parent pi's dialog, or by `subagents answer`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { messageText, script } from "../../../src/scripted/model-server.ts";
import {
  CURRENT_PI_VERSION,
  BUN,
  cli,
  piCmd,
  piWorld,
  REPO,
  summaryOf,
  type PiWorld,
  until,
  taskWhy,
} from "../../support/pi-env.ts";
import { hasTmux, openPane } from "../../support/tmux.ts";

let world: PiWorld;
const FIXTURE = join(import.meta.dir, "..", "..", "fixtures", "ask-extension.ts");
beforeAll(async () => {
  world = await piWorld();
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "gated.md"),
    `---\nname: gated\ndescription: Asks before rm\nextensions: ${FIXTURE}\n---\nWork carefully.\n`,
  );
});
afterAll(async () => {
  await world.close();
});

const gatedSteps = [
  { tool: "bash", args: { command: "echo rm-build" } },
  { finalize: { status: "SUCCESS", result: "done" } },
];

test("headless (--json): a child extension's confirm is answered no at once and recorded as a task warning", async () => {
  const log = join(world.root, "ask-headless.log");
  rmSync(log, { force: true });
  const t0 = Date.now();
  const r = await cli(world, ["delegate", `gate ${script(gatedSteps)}`, "--profile", "gated", "--json"], {
    env: { ASK_FIXTURE_LOG: log },
  });
  expect(r.code).toBe(0);
  expect(Date.now() - t0).toBeLessThan(30_000);
  const [task] = summaryOf(r.json);
  expect(task.status, taskWhy(task)).toBe("completed");
  expect(readFileSync(log, "utf8")).toBe("confirm:false\n");
  expect(task.warnings).toEqual([
    'unanswered question (no one can answer now; the child got "no"): Allow bash? echo rm-build',
  ]);
  // The record keeps it: `session` shows it under its run.
  const session = await cli(world, ["session", task.sessionId]);
  expect(session.stdout).toContain(
    '⚠ unanswered question (no one can answer now; the child got "no"): Allow bash? echo rm-build',
  );
}, 60_000);

test("the executable (its embedded pi as the child): the same question is forwarded and recorded", async () => {
  const log = join(world.root, "ask-binary.log");
  rmSync(log, { force: true });
  const r = await cli(world, ["delegate", `gate ${script(gatedSteps)}`, "--profile", "gated", "--json"], {
    binary: true,
    env: { ASK_FIXTURE_LOG: log },
  });
  expect(r.code).toBe(0);
  expect(readFileSync(log, "utf8")).toBe("confirm:false\n");
  expect(summaryOf(r.json)[0].warnings).toEqual([
    'unanswered question (no one can answer now; the child got "no"): Allow bash? echo rm-build',
  ]);
}, 60_000);

/** The tool names of the first request whose newest user message starts with `marker`. */
function toolsOfTask(marker: string): string[] {
  const req = world.server.requests.find((q) => {
    const last = (q.messages ?? []).filter((m) => m.role === "user").at(-1);
    return last && messageText(last).startsWith(marker);
  });
  return (req?.tools ?? []).map((t) => t.function?.name ?? "");
}

test("ask_parent is offered only where someone can answer: not headless, not with subagents.ask = deny; a background run's child has it and gets the answer", async () => {
  // Headless (--json): nobody can answer, so the child is not offered the tool (issue 35: every request would carry it).
  const r = await cli(world, ["delegate", `ask-headless-1 ${script([{ text: "ok" }])}`, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  expect(toolsOfTask("ask-headless-1")).not.toContain("ask_parent");
  expect(toolsOfTask("ask-headless-1")).toContain("subagent_finalize");
  const settings = join(world.workDir, ".pi", "settings.json");
  mkdirSync(join(world.workDir, ".pi"), { recursive: true });
  writeFileSync(settings, JSON.stringify({ subagents: { ask: "deny" } }));
  try {
    const d = await cli(world, ["delegate", "--background", "--json", `ask-denied-2 ${script([{ text: "ok" }])}`]);
    const id = d.json.find((e) => e.type === "task_background")!.sessionId as string;
    await cli(world, ["wait", id, "--json"]);
    expect(toolsOfTask("ask-denied-2")).not.toContain("ask_parent");
  } finally {
    rmSync(settings, { force: true });
  }
  // A background run's questions wait for `subagents answer`: its child has the tool, and the answer reaches it.
  const steps = [
    { tool: "ask_parent", args: { question: "Which design?", options: ["a", "b"] } },
    { finalize: { status: "SUCCESS", result: "went with b" } },
  ];
  const b = await cli(world, ["delegate", "--background", "--json", `ask-bg-3 ${script(steps)}`]);
  const id = b.json.find((e) => e.type === "task_background")!.sessionId as string;
  let answered = false;
  for (let i = 0; i < 150 && !answered; i++) {
    answered = (await cli(world, ["answer", id, "b"])).code === 0;
    if (!answered) await Bun.sleep(200);
  }
  expect(answered, "the background child's ask_parent question never became answerable").toBe(true);
  const w = await cli(world, ["wait", id, "--json"]);
  expect(w.json.at(-1)!.tasks[0]).toMatchObject({ status: "completed" });
  expect(toolsOfTask("ask-bg-3")).toContain("ask_parent");
  const toolResults = world.server.requests.flatMap((q) =>
    (q.messages ?? []).filter((m) => m.role === "tool").map(messageText),
  );
  expect(toolResults).toContain("Answer: b");
}, 120_000);

test.skipIf(!hasTmux)(
  "the CLI on a terminal: the live frame pauses, the question is asked there, and 'y' reaches the child",
  async () => {
    const log = join(world.root, "ask-tty.log");
    rmSync(log, { force: true });
    const steps = [
      { tool: "bash", args: { command: "echo rm-build" } },
      { finalize: { status: "SUCCESS", result: "done" } },
    ];
    const pane = openPane(
      [
        BUN,
        join(REPO, "src", "cli", "main.ts"),
        "delegate",
        "--name",
        "reviewer-2",
        "--profile",
        "gated",
        `gate ${script(steps)}`,
      ],
      { cols: 100, rows: 30, cwd: world.workDir, env: { ...world.env, ASK_FIXTURE_LOG: log } },
    );
    try {
      const asked = await pane.waitFor((s) => s.includes("Allow? [y/N]"), 60_000);
      expect(asked).toContain("[reviewer-2] Allow bash?");
      expect(asked).toContain("echo rm-build");
      pane.keys("y", "Enter");
      const end = await pane.waitFor((s) => /EXIT=\d+/.test(s), 60_000);
      expect(end).toContain("EXIT=0");
      expect(end).toContain("✓ reviewer-2");
      expect(readFileSync(log, "utf8")).toBe("confirm:true\n");
      expect(pane.history()).not.toContain("unanswered question");
    } finally {
      pane.close();
    }
  },
  90_000,
);

test.skipIf(!hasTmux)(
  `an interactive parent pi ${CURRENT_PI_VERSION}: a dialog names the child; Yes reaches it, and a second child's question waits its turn`,
  async () => {
    const log = join(world.root, "ask-pi.log");
    rmSync(log, { force: true });
    const child = (cmd: string) =>
      `gate ${script([{ tool: "bash", args: { command: cmd } }, { finalize: { status: "SUCCESS", result: "done" } }])}`;
    const parent = [
      {
        tool: "delegate_to_subagents",
        args: {
          tasks: [
            { name: "reviewer-2", profile: "gated", prompt: child("echo rm-one") },
            { name: "reviewer-3", profile: "gated", prompt: child("echo rm-two") },
          ],
        },
      },
      { text: "parent done" },
    ];
    const pane = openPane([...piCmd("current", "node"), "-e", join(REPO, "dist", "extension.js")], {
      cols: 140,
      rows: 40,
      cwd: world.workDir,
      env: { ...world.env, PI_OFFLINE: "1", ASK_FIXTURE_LOG: log },
    });
    try {
      await pane.waitFor((s) => s.includes("fake-model"), 60_000);
      pane.keys("-l", `delegate ${script(parent)}`);
      // pi refuses input until its start-up has finished (the text stays in the editor): submit until the call
      // shows, never once the question is up (Enter would answer it).
      const started = (s: string) => s.includes("Sub-agents:") || /Allow bash\?/.test(s);
      for (let i = 0; i < 30 && !started(pane.screen()); i++) {
        pane.keys("Enter");
        await pane.waitFor(started, 2000).catch(() => {});
      }
      // One dialog at a time: the first question is on screen, the other one is not.
      const first = await pane.waitFor((s) => /\[reviewer-[23]\] Allow bash\? echo rm-(one|two)/.test(s), 60_000);
      const firstName = /\[(reviewer-[23])\]/.exec(first)![1];
      const otherName = firstName === "reviewer-2" ? "reviewer-3" : "reviewer-2";
      expect(first).not.toContain(`[${otherName}]`);
      pane.keys("Enter"); // "Yes" is the first choice
      // Then the queued one; Esc leaves it unanswered (the child gets "no", and the task records the question).
      await pane.waitFor((s) => s.includes(`[${otherName}] Allow bash?`), 30_000);
      pane.keys("Escape");
      await pane.waitFor((s) => /✓ reviewer-2/.test(s) && /✓ reviewer-3/.test(s), 60_000);
      expect(readFileSync(log, "utf8").split("\n").filter(Boolean).sort()).toEqual(["confirm:false", "confirm:true"]);
      const screen = pane.history();
      const cmdOf = (name: string) => (name === "reviewer-2" ? "echo rm-one" : "echo rm-two");
      // The dismissed one is a warning of its own task (with the question's text); the answered one is not.
      expect(screen).toContain(
        `⚠ unanswered question (the question was dismissed without an answer; the child got "no"): Allow bash? ${cmdOf(otherName)}`,
      );
      expect(screen).not.toContain(`Allow bash? ${cmdOf(firstName)}\n   ⚠`);
      expect(screen.match(/⚠ unanswered question/g)?.length).toBe(1);
    } finally {
      pane.close();
    }
  },
  120_000,
);

test("a background run's question waits: `subagents answer` answers it; with nobody answering, askTimeout ends the wait", async () => {
  const log = join(world.root, "ask-bg.log");
  rmSync(log, { force: true });
  const r = await cli(
    world,
    ["delegate", "--background", "--json", "--name", "bg-asker", "--profile", "gated", `gate ${script(gatedSteps)}`],
    { env: { ASK_FIXTURE_LOG: log } },
  );
  const id = r.json.find((e) => e.type === "task_background")!.sessionId as string;
  // Not answerable before the child asks; then answered once.
  let answered: Awaited<ReturnType<typeof cli>> | null = null;
  for (let i = 0; i < 150; i++) {
    const a = await cli(world, ["answer", id, "yes"]);
    if (a.code === 0) {
      answered = a;
      break;
    }
    expect(a.stderr).toMatch(/no open question|is starting|not started yet/);
    await Bun.sleep(200);
  }
  expect(answered?.stderr).toContain(`answered ${id}`);
  const w = await cli(world, ["wait", id, "--json"]);
  const task = w.json.at(-1)!.tasks[0];
  expect(task).toMatchObject({ status: "completed", output: "done" });
  expect(task.warnings).toBeUndefined();
  expect(readFileSync(log, "utf8")).toBe("confirm:true\n");
  const again = await cli(world, ["answer", id, "yes"]);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain("is not running");

  // Nobody answers: after askTimeout the child gets "no" and the question is a warning of the task.
  const settings = join(world.workDir, ".pi", "settings.json");
  mkdirSync(join(world.workDir, ".pi"), { recursive: true });
  writeFileSync(settings, JSON.stringify({ subagents: { askTimeout: 2 } }));
  try {
    const t0 = Date.now();
    const b = await cli(
      world,
      ["delegate", "--background", "--json", "--profile", "gated", `gate ${script(gatedSteps)}`],
      { env: { ASK_FIXTURE_LOG: log } },
    );
    const id2 = b.json.find((e) => e.type === "task_background")!.sessionId as string;
    const w2 = await cli(world, ["wait", id2, "--json"]);
    expect(w2.json.at(-1)!.tasks[0].warnings).toEqual([
      'unanswered question (no answer came in time; the child got "no"): Allow bash? echo rm-build',
    ]);
    expect(Date.now() - t0).toBeGreaterThan(2000);
    expect(readFileSync(log, "utf8")).toBe("confirm:true\nconfirm:false\n");
  } finally {
    rmSync(settings, { force: true });
  }
}, 90_000);

test("pi without a UI (the delegate tool, hasUI false): answered at once, and the question is in the result's warnings", async () => {
  const { delegateTool } = await import("../../../src/pi/tool-delegate.ts");
  const { makeToolEnv } = await import("../../../src/pi/tool-env.ts");
  const { createServices } = await import("../../../src/pi/services.ts");
  const saved = { ...process.env };
  Object.assign(process.env, world.env);
  try {
    const r = (await delegateTool(makeToolEnv({ services: createServices, appendEntry: () => {} })).execute(
      "t",
      { tasks: [{ name: "headless-pi", profile: "gated", prompt: `gate ${script(gatedSteps)}` }] },
      undefined,
      undefined,
      { cwd: world.workDir, hasUI: false },
    )) as { content: { text: string }[]; details: any };
    expect(r.content[0].text).toContain("✓ headless-pi: completed");
    expect(JSON.stringify(r.details)).toContain(
      'unanswered question (no one can answer now; the child got \\"no\\"): Allow bash? echo rm-build',
    );
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}, 60_000);

test("cancelling a run whose child waits on a question stops it at once (recorded cancelled, the question as a warning)", async () => {
  const r = await cli(world, [
    "delegate",
    "--background",
    "--json",
    "--profile",
    "gated",
    `gate ${script(gatedSteps)}`,
  ]);
  const id = r.json.find((e) => e.type === "task_background")!.sessionId as string;
  for (let i = 0; i < 150; i++) {
    if ((await cli(world, ["logs", id])).stdout.includes("? asks: Allow bash?")) break;
    await Bun.sleep(200);
  }
  const t0 = Date.now();
  expect((await cli(world, ["cancel", id])).code).toBe(0);
  const w = await cli(world, ["wait", id, "--json"]);
  expect(Date.now() - t0).toBeLessThan(15_000);
  const task = w.json.at(-1)!.tasks[0];
  expect(task).toMatchObject({ status: "error", errorCode: "SUBAGENT_CANCELLED" });
  expect(task.warnings).toEqual([
    'unanswered question (the run ended before an answer came; the child got "no"): Allow bash? echo rm-build',
  ]);
}, 60_000);

test.skipIf(!hasTmux)(
  "Ctrl-C while the terminal asks: the question closes, the run stops as always (exit 130, recorded cancelled)",
  async () => {
    const pane = openPane(
      [
        BUN,
        join(REPO, "src", "cli", "main.ts"),
        "delegate",
        "--name",
        "stopper",
        "--profile",
        "gated",
        `gate ${script(gatedSteps)}`,
      ],
      { cols: 100, rows: 30, cwd: world.workDir, env: world.env },
    );
    try {
      await pane.waitFor((s) => s.includes("Allow? [y/N]"), 60_000);
      pane.keys("C-c");
      const end = await pane.waitFor((s) => /EXIT=\d+/.test(s), 30_000);
      expect(end).toContain("EXIT=130");
      expect(end).toContain("⊘ stopper");
    } finally {
      pane.close();
    }
  },
  60_000,
);

test("select and input are forwarded too: a background child's choice answered by `subagents answer`, its text by a steer", async () => {
  const log = join(world.root, "ask-select.log");
  rmSync(log, { force: true });
  const steps = [
    { tool: "bash", args: { command: "echo pick" } },
    { tool: "bash", args: { command: "echo name" } },
    { finalize: { status: "SUCCESS", result: "released" } },
  ];
  const r = await cli(world, ["delegate", "--background", "--json", "--profile", "gated", `release ${script(steps)}`], {
    env: { ASK_FIXTURE_LOG: log },
  });
  const id = r.json.find((e) => e.type === "task_background")!.sessionId as string;
  const until = async (what: string, args: string[]) => {
    for (let i = 0; i < 150; i++) {
      const a = await cli(world, args);
      if (a.code === 0) return a;
      await Bun.sleep(200);
    }
    throw new Error(`never ${what}`);
  };
  await until("answered the choice", ["answer", id, "PROD"]);
  // The second question: a steer is its answer (as the fleet view's steer and get_subagent_output's are).
  for (let i = 0; i < 150 && !(await cli(world, ["logs", id])).stdout.includes("? asks: Release name? e.g. v2"); i++)
    await Bun.sleep(200);
  const s = await cli(world, ["steer", id, "v2.1"]);
  expect(s.stderr).toContain(`answered the question ${id} was waiting on`);
  const w = await cli(world, ["wait", id, "--json"]);
  expect(w.json.at(-1)!.tasks[0]).toMatchObject({ status: "completed", output: "released" });
  expect(readFileSync(log, "utf8")).toBe("select:prod\ninput:v2.1\n");
}, 90_000);

test("a child waiting on a question is not idle: past its --timeout while it waits, it is not stopped, and its answer still arrives and is acted on", async () => {
  const settings = join(world.workDir, ".pi", "settings.json");
  mkdirSync(join(world.workDir, ".pi"), { recursive: true });
  // askTimeout is far beyond the test's pace (a busy machine may take a minute to show the question).
  writeFileSync(settings, JSON.stringify({ subagents: { extend_timeout_debounce: 0, askTimeout: 600 } }));
  const log = join(world.root, "ask-idle.log");
  rmSync(log, { force: true });
  // The timeout counts from the child's start, so it must outlast the child's way to its question: a loaded machine
  // took 3–5 s to start pi and reach it (a 2 s timeout stopped the child before it asked).
  const timeoutSec = 12;
  try {
    const r = await cli(
      world,
      [
        "delegate",
        "--background",
        "--json",
        "--timeout",
        String(timeoutSec),
        "--profile",
        "gated",
        `gate ${script(gatedSteps)}`,
      ],
      { env: { ASK_FIXTURE_LOG: log } },
    );
    const id = r.json.find((e) => e.type === "task_background")!.sessionId as string;
    await until("the question in the run's log", async () => {
      if ((await cli(world, ["logs", id])).stdout.includes("? asks: Allow bash?")) return true;
      const out = (await cli(world, ["output", id, "--json"])).json?.[0];
      if (out && out.status !== "running")
        throw new Error(`the run ended before its child asked (a machine too slow for this test?): ${taskWhy(out)}`);
      return false;
    });
    // The child started before it asked: this wait ends past its timeout (the time itself is what is tested).
    await Bun.sleep(timeoutSec * 1000 + 3000);
    const a = await cli(world, ["answer", id, "yes"]);
    expect(a.code, a.stderr).toBe(0);
    const w = await cli(world, ["wait", id, "--json"]);
    const task = w.json.at(-1)!.tasks[0];
    expect(task, taskWhy(task)).toMatchObject({ status: "completed", output: "done" });
    expect(readFileSync(log, "utf8")).toBe("confirm:true\n");
  } finally {
    rmSync(settings, { force: true });
  }
}, 180_000);

test("pi without a UI, background: the question reaches the parent model as a notice, and an answer from elsewhere reaches the child", async () => {
  const marker = `bgask-${Date.now()}`;
  const log = join(world.root, "ask-pibg.log");
  rmSync(log, { force: true });
  const cliBin = join(REPO, "dist", "subagents");
  // The parent, busy in one bash call: answers its child's question from the CLI once it is open, then waits for the end.
  const busy =
    `for i in $(seq 1 120); do ${cliBin} answer {{lastSessionId}} yes && break; sleep 0.5; done; ` +
    `for i in $(seq 1 300); do ${cliBin} sessions --running | grep -q "Nothing is running" && break; sleep 0.2; done; sleep 1`;
  const steps = [
    {
      tool: "delegate_to_subagents",
      args: {
        tasks: [{ name: "bgask", profile: "gated", prompt: `gate ${marker} ${script(gatedSteps)}` }],
        background: true,
      },
    },
    { tool: "bash", args: { command: busy } },
    { text: `parent done ${marker}` },
  ];
  const proc = Bun.spawn({
    cmd: [
      ...piCmd("current", "node"),
      "-p",
      "--session",
      join(world.root, `parent-${marker}.jsonl`),
      "-e",
      join(REPO, "dist", "extension.js"),
    ],
    cwd: world.workDir,
    env: { ...world.env, ASK_FIXTURE_LOG: log },
    stdin: new TextEncoder().encode(`parent task ${marker} ${script(steps)}`),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect(await proc.exited, stderr).toBe(0);
  expect(readFileSync(log, "utf8")).toBe("confirm:true\n");
  const parentReqs = world.server.requests
    .map((r) => JSON.stringify(r.messages ?? []))
    .filter((t) => t.includes(`parent task ${marker}`));
  expect(
    parentReqs.some((t) =>
      /Background sub-agent bgask \(session: [0-9a-f]{16}\) asks: Allow bash\? echo rm-build/.test(t),
    ),
  ).toBe(true);
}, 90_000);

test("an extension's own dialog timeout still applies: the child stops waiting, the owner closes the question and records it", async () => {
  const log = join(world.root, "ask-quick.log");
  rmSync(log, { force: true });
  const steps = [
    { tool: "bash", args: { command: "echo quick" } },
    { finalize: { status: "SUCCESS", result: "went on" } },
  ];
  const r = await cli(world, ["delegate", "--background", "--json", "--profile", "gated", `quick ${script(steps)}`], {
    env: { ASK_FIXTURE_LOG: log },
  });
  const id = r.json.find((e) => e.type === "task_background")!.sessionId as string;
  const w = await cli(world, ["wait", id, "--json"]);
  const task = w.json.at(-1)!.tasks[0];
  expect(task).toMatchObject({ status: "completed", output: "went on" });
  expect(task.warnings).toEqual([
    'unanswered question (the asking extension stopped waiting; the child got "no"): Quick check? echo quick',
  ]);
  expect(readFileSync(log, "utf8")).toBe("quick:false\n");
  const late = await cli(world, ["answer", id, "yes"]);
  expect(late.code).toBe(1);
}, 60_000);

test.skipIf(!hasTmux)(
  "a question open on the CLI's terminal can be answered from another terminal (`subagents answer`)",
  async () => {
    const log = join(world.root, "ask-elsewhere.log");
    rmSync(log, { force: true });
    const pane = openPane(
      [
        BUN,
        join(REPO, "src", "cli", "main.ts"),
        "delegate",
        "--name",
        "elsewhere",
        "--profile",
        "gated",
        `gate ${script(gatedSteps)}`,
      ],
      { cols: 100, rows: 30, cwd: world.workDir, env: { ...world.env, ASK_FIXTURE_LOG: log } },
    );
    try {
      await pane.waitFor((s) => s.includes("Allow? [y/N]"), 60_000);
      const running = await cli(world, ["sessions", "--running", "--json"]);
      const id = running.json.find((s) => s.name === "elsewhere")!.id as string;
      expect((await cli(world, ["answer", id, "yes"])).code).toBe(0);
      const end = await pane.waitFor((s) => /EXIT=\d+/.test(s), 60_000);
      expect(end).toContain("EXIT=0");
      expect(pane.history()).toContain("(closed: answered elsewhere, timed out or stopped)");
      expect(readFileSync(log, "utf8")).toBe("confirm:true\n");
    } finally {
      pane.close();
    }
  },
  90_000,
);
