// Kept children (core/run/process/pool.ts): a call with more tasks than it runs at once runs its later tasks in the
// children it already started (pi in RPC mode, one session per task), with the executable's embedded current pi as
// the child and the scripted model server. Each task must see only its own session, its own corrective messages,
// its own control pipe and questions; a kill or crash ends that process only; nothing outlives the call.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { Database } from "bun:sqlite";
import { script } from "../../../src/scripted/model-server.ts";
import {
  CURRENT_PI_VERSION,
  cli,
  PI_PACKAGE_DIRS,
  piWorld,
  REPO,
  requestsOfTask,
  summaryOf,
  type PiWorld,
  taskWhy,
} from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";

let world: PiWorld;
let pids: string;
beforeAll(async () => {
  world = await piWorld();
  pids = join(world.root, "pids");
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "gated.md"),
    `---\nname: gated\ndescription: Asks before rm\nextensions: ${join(import.meta.dir, "..", "..", "fixtures", "ask-extension.ts")}\n---\nWork carefully.\n`,
  );
});
afterAll(() => world.close());

/** A task that writes its pi's pid (the parent of its bash) under its name, then finalizes with `result`. */
const pidStep = (name: string) => ({ tool: "bash", args: { command: `echo $PPID > "$PIDS_DIR/${name}"` } });
const recording = (name: string, result = `result of ${name}`) =>
  `${name} ${script([pidStep(name), { finalize: { status: "SUCCESS", result } }])}`;
/** Runs the executable (its embedded pi is the child), or with `node` the CLI from source with the current pi under
 *  Node 24 as the children's pi (`-e child.js`, loaded through jiti), with a fresh folder for the pids. */
const run = async (args: string[], opts: { stdin?: string; env?: Record<string, string>; node?: boolean } = {}) => {
  rmSync(pids, { recursive: true, force: true });
  mkdirSync(pids, { recursive: true });
  if (opts.node) world.setSubagentSettings({ ...settingsNow, childPi: PI_PACKAGE_DIRS.current, childRuntime: "node" });
  try {
    return await cli(world, args, { binary: !opts.node, ...opts, env: { PIDS_DIR: pids, ...opts.env } });
  } finally {
    if (opts.node) world.setSubagentSettings(settingsNow);
  }
};
let settingsNow: Record<string, unknown> = {};
const withSettings = (s: Record<string, unknown>) => {
  settingsNow = s;
  world.setSubagentSettings(s);
};
const pidOf = (name: string) => Number(readFileSync(join(pids, name), "utf8").trim());
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** The `pi` of a session's last run, as recorded. */
function piOfSession(id: string): string {
  const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
  try {
    return (db.query("SELECT pi FROM runs WHERE session_id = ? ORDER BY id DESC LIMIT 1").get(id) as { pi: string }).pi;
  } finally {
    db.close();
  }
}

/** Every session file of this world whose name has the id, and the user messages in it. */
function userMessages(sessionId: string): string[] {
  const root = join(world.agentDir, "subagent-sessions");
  const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.includes(sessionId));
  expect(files.length).toBe(1);
  return readFileSync(join(root, files[0]), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "message" && e.message?.role === "user")
    .map((e) => JSON.stringify(e.message.content));
}

test.each([
  ["the embedded pi", false],
  [`pi ${CURRENT_PI_VERSION} under Node 24`, true],
])(
  "5 tasks at 2 (%s): later tasks run in the two children already started, each in its own session; none outlives the call",
  async (_name, node) => {
    const names = ["k1", "k2", "k3", "k4", "k5"];
    const r = await run(["delegate", "--json", "--concurrency", "2", ...names.map((n) => recording(n))], { node });
    expect(r.code).toBe(0);
    const tasks = summaryOf(r.json);
    expect(tasks.map((t) => [t.status, t.output])).toEqual(names.map((n) => ["completed", `result of ${n}`]));
    const used = new Set(names.map(pidOf));
    expect(used.size).toBe(2);
    // The record says which ran in a kept child, and where: `session` shows it on the run's Pi line.
    const pis = tasks.map((t) => piOfSession(t.sessionId));
    expect(pis.filter((p) => / · kept child \(task [2-9] of pid \d+\)$/.test(p)).length).toBe(3);
    for (const [i, p] of pis.entries()) if (p.includes("kept child")) expect(p).toContain(`of pid ${pidOf(names[i])})`);
    for (const pid of used) expect(alive(pid)).toBe(false);
    // A task's session holds its own prompt and nothing of the task before it in the same process.
    tasks.forEach((t, i) => {
      const users = userMessages(t.sessionId);
      expect(users.length).toBe(1);
      expect(users[0]).toContain(`${names[i]} [[script:`);
    });
    // Off by setting: every task starts its own pi.
    withSettings({ reuseChildren: false });
    try {
      const off = await run(["delegate", "--json", "--concurrency", "2", ...names.map((n) => recording(n))], { node });
      expect(summaryOf(off.json).map((t) => t.status)).toEqual(names.map(() => "completed"));
      expect(new Set(names.map(pidOf)).size).toBe(5);
    } finally {
      withSettings({});
    }
  },
  90_000,
);

test("at 1: a corrective message per task, a crash ends only its own task, and the next task gets a new child", async () => {
  withSettings({ finalize: true });
  try {
    // Each of a and c first answers in plain text: the finalize contract nudges each once, in its own session.
    const plainFirst = (name: string) =>
      `${name} ${script([pidStep(name), { text: `plain ${name}` }, { finalize: { status: "SUCCESS", result: `done ${name}` } }])}`;
    const crash = `b ${script([{ tool: "bash", args: { command: `echo $PPID > "$PIDS_DIR/b"; kill -9 $PPID` } }])}`;
    const r = await run([
      "delegate",
      "--json",
      "--concurrency",
      "1",
      plainFirst("a"),
      crash,
      plainFirst("c"),
      plainFirst("d"),
    ]);
    const [a, b, c, d] = summaryOf(r.json);
    expect([a.status, a.output]).toEqual(["completed", "done a"]);
    expect(b.status).toBe("error");
    expect(b.errorCode).toBe("SUBAGENT_FAILED");
    expect(b.error).toContain("killed by SIGKILL");
    expect([c.status, c.output, d.status, d.output]).toEqual(["completed", "done c", "completed", "done d"]);
    // b ran where a did; c needed a new child (b's died), and d ran in c's.
    expect(pidOf("b")).toBe(pidOf("a"));
    expect(pidOf("c")).not.toBe(pidOf("a"));
    expect(pidOf("d")).toBe(pidOf("c"));
    for (const t of [a, c, d]) {
      const users = userMessages(t.sessionId);
      expect(users.length).toBe(2);
      expect(users[1]).toContain("subagent_finalize");
    }
    expect(alive(pidOf("c"))).toBe(false);
  } finally {
    withSettings({});
  }
}, 90_000);

test.each([
  ["the embedded pi", false],
  [`pi ${CURRENT_PI_VERSION} under Node 24`, true],
])(
  "at 1 (%s): a later task's budget steer reaches it through the control pipe, and its dialogs reach the owner",
  async (_name, node) => {
    const busy = [0, 1].map((i) => ({ tool: "bash", args: { command: `sleep 0.3; echo step ${i}` } }));
    const log = join(world.root, "ask-kept.log");
    rmSync(log, { force: true });
    const tasks = {
      tasks: [
        { name: "first", prompt: recording("first") },
        {
          name: "wraps",
          prompt: `wraps up ${script([pidStep("wraps"), ...busy, { finalize: { status: "SUCCESS", result: "partial but honest" } }])}`,
          maxTurns: 3,
        },
        // Two tasks of an agent whose own extension asks: the second runs in the first one's child.
        ...["asks1", "asks2"].map((name) => ({
          name,
          prompt: `gate ${script([pidStep(name), { tool: "bash", args: { command: "echo rm-build" } }, { finalize: { status: "SUCCESS", result: "done" } }])}`,
          profile: "gated",
        })),
      ],
    };
    const r = await run(["delegate", "--json", "--concurrency", "1", "--tasks", "-"], {
      stdin: JSON.stringify(tasks),
      env: { ASK_FIXTURE_LOG: log },
      node,
    });
    const [first, wraps, asks1, asks2] = summaryOf(r.json);
    expect(pidOf("wraps")).toBe(pidOf("first"));
    expect(pidOf("asks2")).toBe(pidOf("asks1"));
    expect(first.status, taskWhy(first)).toBe("completed");
    expect([wraps.status, wraps.output]).toEqual(["completed", "partial but honest"]);
    expect(wraps.warnings.join("\n")).toContain("budget reached: maxTurns (turns 4/3): wrapped up when told");
    const wrapReqs = requestsOfTask(world, "wraps up").slice(-4);
    expect(JSON.stringify(wrapReqs[3].messages)).toContain("Stop working now");
    expect(JSON.stringify(wrapReqs[2].messages)).not.toContain("Stop working now");
    // The gated agent's extension asked in both; as in print mode each question reached the owner (here: nobody
    // can answer, so "no" at once), not pi's RPC UI.
    expect(readFileSync(log, "utf8")).toBe("confirm:false\nconfirm:false\n");
    for (const t of [asks1, asks2]) {
      expect(t.status, taskWhy(t)).toBe("completed");
      expect(t.warnings).toEqual([
        'unanswered question (no one can answer now; the child got "no"): Allow bash? echo rm-build',
      ]);
    }
  },
  90_000,
);

test("Ctrl-C while a kept child runs a task: the call ends with the task cancelled and its process gone", async () => {
  rmSync(pids, { recursive: true, force: true });
  mkdirSync(pids, { recursive: true });
  const tag = `6${Date.now() % 100000}`;
  const hang = `h2 ${script([{ tool: "bash", args: { command: `echo $PPID > "$PIDS_DIR/h2"; sleep ${tag}` } }])}`;
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), "delegate", "--json", "--concurrency", "1", recording("h1"), hang],
    cwd: world.workDir,
    env: { ...world.env, PIDS_DIR: pids },
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = new Response(proc.stdout).text();
  const deadline = Date.now() + 30_000;
  while (
    !(existsSync(join(pids, "h2")) && readFileSync(join(pids, "h2"), "utf8").endsWith("\n")) &&
    Date.now() < deadline
  )
    await Bun.sleep(50);
  expect(pidOf("h2")).toBe(pidOf("h1"));
  proc.kill("SIGINT");
  expect(await proc.exited).toBe(130);
  const json = (await out)
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
  const [h1, h2] = summaryOf(json);
  expect(h1.status, taskWhy(h1)).toBe("completed");
  expect([h2.status, h2.errorCode]).toEqual(["error", "SUBAGENT_CANCELLED"]);
  expect(alive(pidOf("h2"))).toBe(false);
  expect(spawnSync("pgrep", ["-f", `sleep ${tag}`]).status).toBe(1);
}, 90_000);

test("MCP servers: each task in a kept child reaches the user's MCP server, directly and from codemode", async () => {
  const log = join(world.root, "mcp-kept.log");
  rmSync(log, { force: true });
  const fixture = join(REPO, "test", "fixtures", "mcp-server.ts");
  writeFileSync(
    join(world.agentDir, "mcp.json"),
    JSON.stringify({
      mcpServers: {
        fx: { command: process.execPath, args: [fixture, "--log", log], exposure: "direct" },
        fy: { command: process.execPath, args: [fixture, "--log", log] },
      },
    }),
  );
  try {
    // fx is offered to the model directly; fy (pi's default exposure) is reached from a codemode script.
    const code = "const r = await tools.mcp__fy__add({a: 2, b: 40}); return r.structuredContent.sum;";
    const echo = (name: string) =>
      `${name} ${script([pidStep(name), { tool: "mcp__fx__echo", args: { text: `hello-${name}` } }, { tool: "codemode", args: { code } }, { finalize: { status: "SUCCESS", result: name } }])}`;
    const r = await run(["delegate", "--json", "--concurrency", "1", echo("m1"), echo("m2"), echo("m3")]);
    expect(summaryOf(r.json).map((t) => [t.status, t.output])).toEqual([
      ["completed", "m1"],
      ["completed", "m2"],
      ["completed", "m3"],
    ]);
    expect(pidOf("m3")).toBe(pidOf("m1"));
    const calls = readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("call"));
    expect(calls).toEqual(
      ["m1", "m2", "m3"].flatMap((n) => [`call echo {"text":"hello-${n}"}`, 'call add {"a":2,"b":40}']),
    );
    for (const n of ["m1", "m2", "m3"]) {
      const last = requestsOfTask(world, `${n} [[script:`).at(-1);
      expect(JSON.stringify(last?.messages)).toContain(`echo: hello-${n}`);
      expect(JSON.stringify(last?.messages)).toContain("42");
    }
  } finally {
    rmSync(join(world.agentDir, "mcp.json"), { force: true });
  }
}, 90_000);

test("a model pi refuses (unknown name, or no credentials) fails or falls back in a kept child exactly as in a child of its own", async () => {
  const task = (name: string) =>
    `${name} ${script([pidStep(name), { finalize: { status: "SUCCESS", result: `fell back ${name}` } }])}`;
  const r = await run([
    "delegate",
    "--json",
    "--concurrency",
    "1",
    "--model",
    "fable",
    task("f1"),
    task("f2"),
    task("f3"),
  ]);
  expect(r.code).toBe(0);
  const tasks = summaryOf(r.json);
  expect(tasks.map((t) => t.output)).toEqual(["fell back f1", "fell back f2", "fell back f3"]);
  for (const t of tasks)
    expect(t.warnings[0]).toMatch(
      /^model "fable" (is not known to pi here|is matched by pi to provider "[\w.-]*[\w-]", which has no credentials here): running on fake\/fake-model/,
    );
  // The fallback runs (on the default model) share one child.
  expect(pidOf("f3")).toBe(pidOf("f1"));
}, 90_000);

test(`inside a parent pi ${CURRENT_PI_VERSION} (Node 24, \`subagents install\`): one delegate_to_subagents call of 3 tasks at 1 runs them in one kept child`, async () => {
  rmSync(pids, { recursive: true, force: true });
  mkdirSync(pids, { recursive: true });
  world.setSubagentSettings({ concurrency: 1 });
  expect((await cli(world, ["install"], { binary: true })).code).toBe(0);
  try {
    const tasks = ["p1", "p2", "p3"].map((name) => ({ name, prompt: recording(name) }));
    const r = await runParentPi(world, {
      runtime: "node",
      steps: [{ tool: "delegate_to_subagents", args: { tasks } }, { text: "parent done" }],
      env: { PIDS_DIR: pids },
      installed: true,
    });
    expect(r.code).toBe(0);
    const [result] = r.results;
    expect(result.isError).toBe(false);
    for (const n of ["p1", "p2", "p3"]) expect(result.text).toContain(`result of ${n}`);
    expect(result.text).not.toMatch(/error|failed/i);
    expect(new Set(["p1", "p2", "p3"].map(pidOf)).size).toBe(1);
    expect(alive(pidOf("p1"))).toBe(false);
  } finally {
    await cli(world, ["install", "--uninstall"], { binary: true });
    world.setSubagentSettings({});
  }
}, 90_000);

test("a chain (`after`) at the default concurrency: each step runs in the child the step before it used, with its output", async () => {
  const tasks = {
    tasks: [
      { name: "scout", prompt: recording("scout", "found 3 files") },
      { name: "plan", prompt: `${recording("plan", "plan done")} (scout said: {{scout}})`, after: ["scout"] },
      { name: "build", prompt: recording("build", "built"), after: ["plan"] },
    ],
  };
  const r = await run(["delegate", "--json", "--tasks", "-"], { stdin: JSON.stringify(tasks) });
  expect(r.code).toBe(0);
  expect(summaryOf(r.json).map((t) => [t.name, t.status, t.output])).toEqual([
    ["scout", "completed", "found 3 files"],
    ["plan", "completed", "plan done"],
    ["build", "completed", "built"],
  ]);
  expect(new Set(["scout", "plan", "build"].map(pidOf)).size).toBe(1);
  const planRequest = requestsOfTask(world, "plan [[script:")[0];
  expect(JSON.stringify(planRequest?.messages)).toContain("scout said: found 3 files");
}, 90_000);
