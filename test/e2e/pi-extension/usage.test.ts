// pi 1.x counts sub-agents' spend (issue 21, item 4): a real parent (the current pi) with our extension, children on the
// current pi, a priced scripted model. The parent's session file carries, on each of our tool results, `usage` equal to
// what its children spent in that call (from the children's own session files), and `structuredContent` with the
// tasks; RPC `get_session_stats` totals include the children. A parent pi 0.87.1 still works (fields ignored).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { EXTENSION, runParentPi } from "../../support/parent-pi.ts";
import { CURRENT_PI_VERSION, PI_PACKAGE_DIRS, piCmd, piWorld, priceModel, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;

beforeAll(async () => {
  world = await piWorld();
  priceModel(world, { input: 1000, output: 2000 });
  world.setSubagentSettings({ childPi: PI_PACKAGE_DIRS.current, childRuntime: "node" });
});
afterAll(() => world.close());

type Spend = { input: number; output: number; cost: number };
/** What pi itself recorded for assistant messages in these session files. */
function spentIn(files: string[]): Spend {
  const s = { input: 0, output: 0, cost: 0 };
  for (const f of files) {
    for (const line of readFileSync(f, "utf8").split("\n")) {
      if (!line) continue;
      const e = JSON.parse(line);
      if (e.type !== "message" || e.message?.role !== "assistant" || !e.message.usage) continue;
      s.input += e.message.usage.input;
      s.output += e.message.usage.output;
      s.cost += e.message.usage.cost.total;
    }
  }
  return s;
}
function childFilesWith(marker: string): string[] {
  const root = join(world.agentDir, "subagent-sessions");
  const out: string[] = [];
  for (const dir of readdirSync(root))
    for (const f of readdirSync(join(root, dir)))
      if (firstUserText(join(root, dir, f)).startsWith(marker)) out.push(join(root, dir, f));
  return out;
}

/** A child's task: the first user message of its session (its siblings' tasks are named after it too). */
function firstUserText(file: string): string {
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line) continue;
    const e = JSON.parse(line);
    if (e.type !== "message" || e.message?.role !== "user") continue;
    const content = e.message.content;
    return typeof content === "string" ? content : content.map((c: { text?: string }) => c.text ?? "").join("");
  }
  return "";
}

test(`a parent pi ${CURRENT_PI_VERSION} records the children's usage on delegate_to_subagents and subagent results`, async () => {
  const tasks = ["u1", "u2"].map((n) => ({
    name: n,
    prompt: `${n}-7701 ${script([{ tool: "bash", args: { command: `echo ${n}` } }, { text: `answer ${n}` }])}`,
  }));
  const { code, results } = await runParentPi(world, {
    runtime: "node",
    steps: [
      { tool: "delegate_to_subagents", args: { tasks } },
      {
        tool: "subagent",
        args: {
          agent: "worker",
          task: `solo-7702 ${script([{ finalize: { status: "SUCCESS", result: "solo done" } }])}`,
        },
      },
      { text: "all done" },
    ],
  });
  expect(code).toBe(0);
  const delegate = results.find((r) => r.toolName === "delegate_to_subagents")!;
  const want = spentIn([...childFilesWith("u1-7701"), ...childFilesWith("u2-7701")]);
  expect(want.cost).toBeGreaterThan(0);
  expect(delegate.usage.input).toBe(want.input);
  expect(delegate.usage.output).toBe(want.output);
  expect(delegate.usage.cost.total).toBeCloseTo(want.cost, 10);
  expect(delegate.usage.totalTokens).toBe(want.input + want.output);
  const single = results.find((r) => r.toolName === "subagent")!;
  const soloSpent = spentIn(childFilesWith("solo-7702"));
  expect(single.usage.cost.total).toBeCloseTo(soloSpent.cost, 10);
}, 120_000);

test(`a codemode script in pi ${CURRENT_PI_VERSION} gets the tasks as structured values, and the codemode result carries their usage`, async () => {
  const tasks = ["c1", "c2"].map((n) => ({ name: n, prompt: `${n}-7731 ${script([{ text: `coded ${n}` }])}` }));
  const code = `const r = await tools.delegate_to_subagents(${JSON.stringify({ tasks })}); return r.tasks.map((t) => t.name + "=" + t.status + ":" + t.output + ":" + /^[0-9a-f]{16}$/.test(t.sessionId)).join("|");`;
  const { code: exit, results } = await runParentPi(world, {
    runtime: "node",
    args: ["--tools", "+codemode"],
    steps: [{ tool: "codemode", args: { code } }, { text: "ok" }],
  });
  expect(exit).toBe(0);
  const r = results.find((x) => x.toolName === "codemode")!;
  expect(r.text).toContain("c1=completed:coded c1:true|c2=completed:coded c2:true");
  const want = spentIn([...childFilesWith("c1-7731"), ...childFilesWith("c2-7731")]);
  expect(want.cost).toBeGreaterThan(0);
  expect(r.usage.cost.total).toBeCloseTo(want.cost, 10);
}, 120_000);

test("a background child's usage reaches pi once: with the first get_subagent_output that returns its result", async () => {
  const id = "bgusage7741";
  const { code, results } = await runParentPi(world, {
    runtime: "node",
    steps: [
      {
        tool: "subagent",
        args: {
          agent: "worker",
          sessionId: id,
          background: true,
          task: `bg-7741 ${script([{ finalize: { status: "SUCCESS", result: "bg done" } }])}`,
        },
      },
      { tool: "get_subagent_output", args: { sessionId: id, wait: true } },
      { tool: "get_subagent_output", args: { sessionId: id } },
      { text: "ok" },
    ],
  });
  expect(code).toBe(0);
  const [started, first, second] = results;
  expect(started.toolName).toBe("subagent");
  expect(started.usage).toBeUndefined();
  expect(first.text).toContain("bg done");
  const want = spentIn(childFilesWith("bg-7741"));
  expect(want.cost).toBeGreaterThan(0);
  expect(first.usage.cost.total).toBeCloseTo(want.cost, 10);
  expect(second.usage).toBeUndefined();
}, 120_000);

test(`RPC get_session_stats of a parent pi ${CURRENT_PI_VERSION} includes its children's tokens and cost`, async () => {
  const sessionFile = join(world.root, "rpc-parent.jsonl");
  const proc = Bun.spawn({
    cmd: [...piCmd("current", "node"), "--mode", "rpc", "--session", sessionFile, "-e", EXTENSION],
    cwd: world.workDir,
    env: world.env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: any[] = [];
  const reader = (async () => {
    let buf = "";
    for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      buf += new TextDecoder().decode(chunk);
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith("{")) lines.push(JSON.parse(line));
      }
    }
  })();
  const until = async (pred: (l: any) => boolean) => {
    const t0 = Date.now();
    while (!lines.some(pred)) {
      if (Date.now() - t0 > 60_000)
        throw new Error(`timed out; last lines: ${JSON.stringify(lines.slice(-3)).slice(0, 500)}`);
      await Bun.sleep(50);
    }
    return lines.find(pred);
  };
  try {
    const tasks = [{ name: "r1", prompt: `r1-7711 ${script([{ text: "rpc child answer" }])}` }];
    proc.stdin.write(
      `${JSON.stringify({ id: "p1", type: "prompt", message: `rpc parent ${script([{ tool: "delegate_to_subagents", args: { tasks } }, { text: "parent done" }])}` })}\n`,
    );
    proc.stdin.flush();
    await until((l) => l.type === "agent_end");
    proc.stdin.write(`${JSON.stringify({ id: "s1", type: "get_session_stats" })}\n`);
    proc.stdin.flush();
    const stats = (await until((l) => l.type === "response" && l.command === "get_session_stats")).data;
    const parent = spentIn([sessionFile]);
    const child = spentIn(childFilesWith("r1-7711"));
    expect(child.cost).toBeGreaterThan(0);
    expect(stats.tokens.input).toBe(parent.input + child.input);
    expect(stats.tokens.output).toBe(parent.output + child.output);
    expect(stats.cost).toBeCloseTo(parent.cost + child.cost, 10);
  } finally {
    proc.stdin.end();
    await proc.exited;
    await reader;
  }
}, 120_000);

for (const release of ["previous", "old"] as const) {
  test(`a parent pi ${release === "previous" ? "0.87.1" : "0.73.1"} takes the same results (usage and structured content are ignored there)`, async () => {
    const marker = `old-${release}-7721`;
    const { code, results } = await runParentPi(world, {
      runtime: "node",
      release,
      steps: [
        {
          tool: "delegate_to_subagents",
          args: { tasks: [{ name: "old", prompt: `${marker} ${script([{ text: "old answer" }])}` }] },
        },
        { text: "ok" },
      ],
    });
    expect(code).toBe(0);
    const r = results.find((x) => x.toolName === "delegate_to_subagents")!;
    expect(r.isError).toBe(false);
    expect(r.text).toContain("old answer");
  }, 120_000);
}
