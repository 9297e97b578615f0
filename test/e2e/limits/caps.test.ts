// Fan-out and spend caps inside a real parent pi (the current pi, Node 24 and Bun) with a priced scripted model: the
// spawn cap refuses a call across calls of one pi session, and still after the session is resumed; the cost cap
// refuses a call once the session's children spent it (and a call whose maxCost is more than what is left); queued
// tasks of a running call do not start once it is reached; duplicate tasks are refused (tool and CLI, exit 2); a
// call above confirmAbove is refused headless unless SUBAGENTS_ALLOW_FANOUT=1.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, piCmd, piWorld, priceModel, requestsOfTask, type PiWorld, taskWhy } from "../../support/pi-env.ts";
import { EXTENSION, runParentPi } from "../../support/parent-pi.ts";

let world: PiWorld;

beforeAll(async () => {
  world = await piWorld();
  // $1,000 per million tokens: every child turn costs dollars, so small caps are reached by one child.
  priceModel(world, { input: 1000, output: 1000 });
});
afterAll(() => world.close());

const delegate = (tasks: { name: string; prompt: string }[], extra: Record<string, unknown> = {}) => ({
  tool: "delegate_to_subagents",
  args: { tasks, ...extra },
});
/** Model requests of children whose task starts with `marker` (the parent's own requests hold it too, in its tool
 *  calls, and so do the siblings' team notes). */
const requestsWith = (marker: string) => requestsOfTask(world, marker);

test("spawn cap: the second call of a session is refused (SPAWN_LIMIT), and still after the pi session is resumed", async () => {
  world.setSubagentSettings({ maxSpawnsPerSession: 3 });
  try {
    const m = `spawncap-${Date.now()}`;
    const first = await runParentPi(world, {
      runtime: "node",
      steps: [
        delegate([
          { name: "a1", prompt: `${m} a1` },
          { name: "a2", prompt: `${m} a2` },
        ]),
        delegate([
          { name: "b1", prompt: `${m} b1` },
          { name: "b2", prompt: `${m} b2` },
        ]),
        { text: "parent done" },
      ],
    });
    expect(first.code).toBe(0);
    const [ok, refused] = first.results;
    expect(ok.isError).toBe(false);
    expect(ok.text).toContain("a1");
    expect(refused.isError).toBe(true);
    expect(refused.details.error.code).toBe("SPAWN_LIMIT");
    expect(refused.details.error.message).toContain(
      "subagents.maxSpawnsPerSession is 3; this pi session has started 2 sub-agents, and this call asks for 2 more",
    );
    expect(requestsWith(`${m} b1`).length).toBe(0);
    // The same pi session again (a resume: a new process and extension, the store keeps the counts).
    const again = await runParentPi(world, {
      runtime: "node",
      sessionFile: first.sessionFile,
      steps: [
        delegate([
          { name: "c1", prompt: `${m} c1` },
          { name: "c2", prompt: `${m} c2` },
        ]),
        delegate([{ name: "d1", prompt: `${m} d1` }]),
        { text: "parent done" },
      ],
    });
    const [c, d] = again.results.slice(first.results.length);
    expect(c.details.error.code).toBe("SPAWN_LIMIT");
    expect(c.details.error.message).toContain("has started 2 sub-agents");
    expect(d.isError).toBe(false);
    expect(d.text).toContain("✓ d1");
    expect(requestsWith(`${m} c1`).length).toBe(0);
  } finally {
    world.setSubagentSettings({});
  }
}, 180_000);

test("cost cap (parent pi on Bun): a call whose maxCost is more than what is left is refused; once the children spent the cap, the next call is refused", async () => {
  world.setSubagentSettings({ maxSessionCost: 0.5 });
  try {
    const m = `costcap-${Date.now()}`;
    const r = await runParentPi(world, {
      runtime: "bun",
      steps: [
        delegate([{ name: "greedy", prompt: `${m} greedy` }], { maxCost: 5 }),
        delegate([{ name: "spender", prompt: `${m} spender` }]),
        delegate([{ name: "late", prompt: `${m} late` }]),
        { text: "parent done" },
      ],
    });
    expect(r.code).toBe(0);
    const [greedy, spender, late] = r.results;
    expect(greedy.details.error.code).toBe("BUDGET_EXCEEDED");
    expect(greedy.details.error.message).toContain(
      "this call's maxCost $5.00 is more than what is left of subagents.maxSessionCost $0.50 ($0.00 spent, $0.50 left)",
    );
    expect(requestsWith(`${m} greedy`).length).toBe(0);
    expect(spender.isError).toBe(false);
    expect(spender.text).toContain("✓ spender");
    expect(late.isError).toBe(true);
    expect(late.details.error.code).toBe("BUDGET_EXCEEDED");
    expect(late.details.error.message).toMatch(
      /subagents\.maxSessionCost is \$0\.50; this pi session's sub-agents have spent \$\d+\.\d\d\. Nothing was started\./,
    );
    expect(requestsWith(`${m} late`).length).toBe(0);
  } finally {
    world.setSubagentSettings({});
  }
}, 180_000);

test("cost cap reached mid-call: the running task finishes, queued ones are recorded as not started", async () => {
  world.setSubagentSettings({ maxSessionCost: 0.5, concurrency: 1 });
  try {
    const m = `midcall-${Date.now()}`;
    const r = await runParentPi(world, {
      runtime: "node",
      steps: [
        delegate([
          { name: "first", prompt: `${m} first` },
          { name: "second", prompt: `${m} second` },
          { name: "third", prompt: `${m} third` },
        ]),
        { text: "parent done" },
      ],
    });
    const [res] = r.results;
    expect(res.text).toContain("✓ first");
    expect(res.text).toMatch(
      /✗ second: .*subagents\.maxSessionCost is \$0\.50; this pi session's sub-agents have spent \$\d+\.\d\d: not started/,
    );
    expect(res.text).toMatch(/✗ third: .*not started/);
    expect(requestsWith(`${m} first`).length).toBeGreaterThan(0);
    expect(requestsWith(`${m} second`).length).toBe(0);
    expect(requestsWith(`${m} third`).length).toBe(0);
  } finally {
    world.setSubagentSettings({});
  }
}, 180_000);

test("duplicate tasks are refused before anything starts: the tool (INVALID_INPUT) and the CLI (exit 2)", async () => {
  const m = `dup-${Date.now()}`;
  const r = await runParentPi(world, {
    runtime: "node",
    steps: [
      delegate([
        { name: "one", prompt: `${m} review` },
        { name: "two", prompt: `${m} other` },
        { name: "three", prompt: `  ${m} review\n` },
      ]),
      { text: "parent done" },
    ],
  });
  const [res] = r.results;
  expect(res.isError).toBe(true);
  expect(res.details.error.code).toBe("INVALID_INPUT");
  expect(res.details.error.message).toContain('task 1 ("one") and task 3 ("three") have the same prompt');
  expect(requestsWith(m).length).toBe(0);
  const c = await cli(world, ["delegate", "--json", `${m} cli same`, `${m} cli same`]);
  expect(c.code).toBe(2);
  expect(c.stderr).toContain('Duplicate tasks: task 1 ("task-1") and task 2 ("task-2")');
  expect(requestsWith(`${m} cli`).length).toBe(0);
}, 120_000);

test("confirmAbove headless: a larger call is refused (SPAWN_LIMIT, nothing started) unless SUBAGENTS_ALLOW_FANOUT=1", async () => {
  world.setSubagentSettings({ confirmAbove: 1 });
  try {
    const m = `fanout-${Date.now()}`;
    const tasks = [
      { name: "x", prompt: `${m} x` },
      { name: "y", prompt: `${m} y` },
    ];
    const refused = await runParentPi(world, { runtime: "node", steps: [delegate(tasks), { text: "parent done" }] });
    expect(refused.results[0].details.error.code).toBe("SPAWN_LIMIT");
    expect(refused.results[0].text).toContain(
      "this call starts 2 sub-agents (subagents.confirmAbove is 1) and there is no UI to ask the user",
    );
    expect(requestsWith(m).length).toBe(0);
    const allowed = await runParentPi(world, {
      runtime: "node",
      steps: [delegate(tasks), { text: "parent done" }],
      env: { SUBAGENTS_ALLOW_FANOUT: "1" },
    });
    expect(allowed.results[0].text).toContain("✓ x");
    expect(allowed.results[0].text).toContain("✓ y");
  } finally {
    world.setSubagentSettings({});
  }
}, 120_000);

test("the CLI has the same caps per invocation: spawn cap (exit 2, nothing started), cost cap stops queued tasks", async () => {
  const m = `clicaps-${Date.now()}`;
  world.setSubagentSettings({ maxSpawnsPerSession: 1 });
  try {
    const r = await cli(world, ["delegate", "--json", `${m} one`, `${m} two`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "SPAWN_LIMIT: Spawn limit: subagents.maxSpawnsPerSession is 1; this invocation has started 0 sub-agents, and this call asks for 2 more",
    );
    expect(requestsWith(m).length).toBe(0);
  } finally {
    world.setSubagentSettings({});
  }
  world.setSubagentSettings({ maxSessionCost: 0.5, concurrency: 1 });
  try {
    const r = await cli(world, ["delegate", "--json", `${m} first`, `${m} second`]);
    const [first, second] = r.json.at(-1)!.tasks;
    expect(r.code).toBe(1);
    expect(first.status, taskWhy(first)).toBe("completed");
    expect(first.cost ?? first.usage?.cost).toBeGreaterThan(0.5);
    expect(second.errorCode).toBe("BUDGET_EXCEEDED");
    expect(second.error).toContain("subagents.maxSessionCost is $0.50; this invocation's sub-agents have spent");
    expect(requestsWith(`${m} second`).length).toBe(0);
  } finally {
    world.setSubagentSettings({});
  }
}, 120_000);

test("background tasks count too: after a background call used the cap, the subagent tool is refused (SPAWN_LIMIT in details.error)", async () => {
  world.setSubagentSettings({ maxSpawnsPerSession: 2 });
  try {
    const m = `bgcap-${Date.now()}`;
    const r = await runParentPi(world, {
      runtime: "node",
      steps: [
        delegate(
          [
            { name: "bg1", prompt: `${m} bg1` },
            { name: "bg2", prompt: `${m} bg2` },
          ],
          { background: true },
        ),
        { tool: "subagent", args: { agent: "scout", task: `${m} one more` } },
        { text: "parent done" },
      ],
    });
    const [bg, single] = r.results;
    expect(bg.text).toContain("started in the background");
    expect(single.details.error.code).toBe("SPAWN_LIMIT");
    expect(single.details.error.message).toContain(
      "subagents.maxSpawnsPerSession is 2; this pi session has started 2 sub-agents, and this call asks for 1 more",
    );
    expect(requestsWith(`${m} one more`).length).toBe(0);
  } finally {
    world.setSubagentSettings({});
  }
}, 120_000);

test("a codemode script gets the refusal's code and message as a value (structuredContent), not a bare rejected text", async () => {
  world.setSubagentSettings({ maxSpawnsPerSession: 1 });
  try {
    const m = `coderef-${Date.now()}`;
    const call = (tasks: { name: string; prompt: string }[]) =>
      `await tools.delegate_to_subagents(${JSON.stringify({ tasks })}).then((r) => JSON.stringify(r.error ?? r), (e) => "rejected: " + e.message)`;
    const code = `return [${call([
      { name: "a", prompt: `${m} a` },
      { name: "b", prompt: `${m} b` },
    ])}, ${call([
      { name: "a", prompt: `${m} same` },
      { name: "b", prompt: `${m} same` },
    ])}].join("\\n");`;
    const r = await runParentPi(world, {
      runtime: "node",
      args: ["--tools", "+codemode"],
      steps: [{ tool: "codemode", args: { code } }, { text: "parent done" }],
    });
    expect(r.code, r.stderr).toBe(0);
    const [spawn, duplicate] = r.results
      .find((x) => x.toolName === "codemode")!
      .text.split("\n")
      .filter((l) => l.startsWith("{") || l.startsWith("rejected"));
    expect(JSON.parse(spawn)).toMatchObject({ code: "SPAWN_LIMIT" });
    expect(JSON.parse(spawn).message).toContain("subagents.maxSpawnsPerSession is 1");
    expect(JSON.parse(duplicate)).toMatchObject({ code: "INVALID_INPUT" });
    expect(JSON.parse(duplicate).message).toContain("Duplicate tasks");
    expect(requestsWith(m).length).toBe(0);
  } finally {
    world.setSubagentSettings({});
  }
}, 120_000);

test("a project's settings.json that tries to raise a cap is ignored and said so: doctor's settings line, the extension's notice in pi", async () => {
  world.setSubagentSettings({ maxSpawnsPerSession: 5 });
  const project = join(world.workDir, ".pi");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "settings.json"), JSON.stringify({ subagents: { maxSpawnsPerSession: 500 } }));
  const said =
    "subagents.maxSpawnsPerSession = 500 would raise the cap (5 from your own settings or the default); a project's settings can only lower it: ignored";
  try {
    const doctor = await cli(world, ["doctor", "--json"]);
    const line = JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === "settings");
    expect(line.detail).toContain(said);
    // pi in RPC mode has a UI: the extension's notice arrives as an extension_ui_request on stdout.
    const proc = Bun.spawn({
      cmd: [...piCmd("current", "node"), "--mode", "rpc", "--no-session", "-e", EXTENSION],
      cwd: world.workDir,
      env: world.env,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    let out = "";
    const t0 = Date.now();
    const reader = (async () => {
      for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>)
        out += new TextDecoder().decode(chunk);
    })();
    while (!out.includes("would raise the cap") && Date.now() - t0 < 60_000) await Bun.sleep(100);
    proc.stdin.end();
    proc.kill();
    await proc.exited;
    await reader;
    const notice = out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l))
      .find((l) => l.type === "extension_ui_request" && l.method === "notify");
    expect(notice, out.slice(0, 2000)).toMatchObject({ notifyType: "warning" });
    expect(notice.message).toContain(said);
  } finally {
    rmSync(project, { recursive: true, force: true });
    world.setSubagentSettings({});
  }
}, 120_000);
