// `subagents mcp` for long work (docs/mcp.md "While a call runs", "Protocol"): a client whose roots/list fails is
// asked once and never loops; stdin closed or SIGTERM ends the server and its children within 5 s whatever its
// calls are doing; a 3 × 60 KB result keeps every status within what a client keeps; progress comes at least every
// 2 s while a child is quiet; a retry sent again is answered from the record; input is checked (ids, versions,
// batches on the revision that has them, bounded echoes). The official SDK client where it can do the case, a raw
// JSON-RPC driver where the case is one no SDK sends.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { processesWithEnv } from "../../../src/host/proc-marks.ts";
import { script } from "../../../src/scripted/model-server.ts";
import { connectMcp, connectTasksMcp, type McpTestClient } from "../../support/mcp-client.ts";
import { cli, piWorld, type PiWorld, REPO, until } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const textOf = (r: { content?: unknown }) => ((r.content as { text?: string }[] | undefined) ?? [])[0]?.text ?? "";
const holdUntil = (file: string) => ({ tool: "bash", args: { command: `until [ -e ${file} ]; do sleep 0.1; done` } });
const worldPids = () =>
  processesWithEnv("SUBAGENTS_TEST_WORLD")
    .filter((p) => p.value === world.root)
    .map((p) => p.pid);
/** The pids of a server's process tree (itself, its children, what their commands started). */
const treeOf = (pid: number): number[] => {
  const all = worldPids();
  const parentOf = (p: number) => {
    try {
      return Number(readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ")[1]);
    } catch {
      return 0;
    }
  };
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all)
      if (!tree.has(p) && tree.has(parentOf(p))) {
        tree.add(p);
        grew = true;
      }
  }
  return [...tree].filter((p) => existsSync(`/proc/${p}`));
};

/** A raw JSON-RPC driver on `dist/subagents mcp`: what it writes, and each answer by id. */
function rawServer() {
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), "mcp"],
    cwd: world.workDir,
    env: world.env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: any[] = [];
  void (async () => {
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += new TextDecoder().decode(chunk);
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        lines.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
    }
  })();
  const send = (m: unknown) => proc.stdin.write(`${typeof m === "string" ? m : JSON.stringify(m)}\n`);
  const answer = (id: unknown) =>
    until(`the answer to ${JSON.stringify(id)}`, () =>
      lines.find((l) => !Array.isArray(l) && l.id === id && !("method" in l)),
    );
  return { proc, lines, send, answer, close: () => proc.stdin.end() };
}

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { roots: {} },
};

test("2025: a client that declares roots and answers roots/list with an error is asked once, warned about once, and its calls run in the server's folder", async () => {
  const c = await connectMcp(world, { roots: "error" });
  try {
    for (const n of [1, 2]) {
      const r = await c.client.callTool(
        {
          name: "delegate_to_subagents",
          arguments: { tasks: [{ name: `r${n}`, prompt: `where ${script([{ text: `here ${n}` }])}` }] },
        },
        { timeout: 60_000 },
      );
      expect(r.isError ?? false, textOf(r)).toBe(false);
      expect(textOf(r)).toContain(`here ${n}`);
    }
    expect(c.rootsAsked.n).toBe(1);
    expect(c.stderr().match(/roots could not be read/g)).toHaveLength(1);
  } finally {
    await c.close();
  }
}, 60_000);

test("2026-07-28: a client that retries without the roots it was asked for is not asked again; its calls run in the server's folder", async () => {
  const s = rawServer();
  try {
    const call = (n: number) => ({
      name: "delegate_to_subagents",
      arguments: { tasks: [{ name: `m${n}`, prompt: `where ${script([{ text: `there ${n}` }])}` }] },
      _meta: MODERN_META,
    });
    s.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: call(1) });
    const round = (await s.answer(1)).result;
    expect(Object.keys(round.inputRequests)).toEqual(["roots"]);
    s.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { ...call(1), requestState: round.requestState } });
    expect(textOf((await s.answer(2)).result)).toContain("there 1");
    s.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: call(2) });
    const second = (await s.answer(3)).result;
    expect(second.resultType).toBe("complete");
    expect(textOf(second)).toContain("there 2");
  } finally {
    s.close();
    await s.proc.exited;
  }
}, 60_000);

test("stdin closed or SIGTERM ends the server and its children within 5 s in every state: idle, a call running, a question out, a task running, a background call", async () => {
  const marker = `states-${Date.now()}`;
  const never = join(world.root, `never-${marker}`);
  const hold = (name: string) => ({ name, prompt: `hold ${script([holdUntil(never)])}` });
  const ask = { name: "asker", prompt: `ask ${script([{ tool: "ask_parent", args: { question: "Go?" } }])}` };
  const idle = await connectMcp(world);
  const running = await connectMcp(world);
  const question = await connectMcp(world, { elicit: () => new Promise<never>(() => {}) });
  const task = await connectTasksMcp(world);
  const background = await connectMcp(world);
  const call = (c: McpTestClient, tasks: unknown[]) =>
    c.client.callTool({ name: "delegate_to_subagents", arguments: { tasks } }, { timeout: 120_000 }).catch(() => {});
  void call(running, [hold(`run-${marker}`)]);
  void call(question, [ask]);
  await task.tasks.callTool("delegate_to_subagents", { tasks: [hold(`task-${marker}`)] });
  await background.client.callTool({
    name: "delegate_to_subagents",
    arguments: { background: true, tasks: [hold(`bg-${marker}`)] },
  });
  const busy = [running, question, task, background];
  await until("every busy server's child started", () => busy.every((c) => treeOf(c.pid).length > 1));
  const trees = [idle, ...busy].map((c) => treeOf(c.pid));
  const t0 = performance.now();
  // Half of them lose their client (stdin closes), half get SIGTERM.
  for (const [i, c] of [idle, ...busy].entries()) {
    if (i % 2) process.kill(c.pid, "SIGTERM");
    else c.transport.close().catch(() => {});
  }
  await until(
    () => `every server and child gone (left: ${trees.flat().filter((p) => existsSync(`/proc/${p}`))})`,
    () => trees.flat().every((p) => !existsSync(`/proc/${p}`)),
  );
  const seconds = (performance.now() - t0) / 1000;
  expect(seconds, `ended after ${seconds.toFixed(1)} s`).toBeLessThan(5);
  for (const c of [idle, ...busy]) await c.close().catch(() => {});
}, 120_000);

test("a 3 × 60 KB delegation: structuredContent is at most 50 KB and starts with every task's status, error and session id; the text says the same", async () => {
  const c = await connectMcp(world, { era: "modern" });
  try {
    const tasks = ["alpha", "beta", "gamma"].map((n) => ({
      name: n,
      prompt: `${n} ${script([{ text: `${n.toUpperCase()}-0123456789`.padEnd(100, "."), repeat: 600 }])}`,
    }));
    const r = await c.client.callTool({ name: "delegate_to_subagents", arguments: { tasks } }, { timeout: 120_000 });
    const json = JSON.stringify(r.structuredContent);
    expect(Buffer.byteLength(json)).toBeLessThanOrEqual(50 * 1024);
    const s = r.structuredContent as { summary: string; tasks: { sessionId: string; output: string }[] };
    const head = json.slice(0, 2000);
    for (const t of s.tasks) {
      expect(head).toContain(`completed (session: ${t.sessionId})`);
      expect(t.output).toContain(`get_subagent_output with sessionId "${t.sessionId}" returns the full text`);
    }
    expect(textOf(r).startsWith(s.summary)).toBe(true);
    expect(Buffer.byteLength(textOf(r))).toBeLessThanOrEqual(52 * 1024);
  } finally {
    await c.close();
  }
}, 120_000);

test("progress comes at least every 2 s while a child runs a quiet command, with the call's elapsed time and each task's state", async () => {
  const c = await connectMcp(world);
  try {
    const at: number[] = [];
    const messages: string[] = [];
    const r = await c.client.callTool(
      {
        name: "delegate_to_subagents",
        arguments: {
          tasks: [
            { name: "quiet", prompt: `q ${script([{ tool: "bash", args: { command: "sleep 3" } }, { text: "ok" }])}` },
          ],
        },
      },
      {
        timeout: 120_000,
        onprogress: (p) => {
          at.push(performance.now());
          messages.push(String(p.message));
        },
      },
    );
    expect(r.isError ?? false, textOf(r)).toBe(false);
    const gaps = at.slice(1).map((t, i) => t - at[i]);
    expect(Math.max(...gaps), `gaps: ${gaps.map((g) => Math.round(g)).join(", ")}`).toBeLessThan(2000);
    expect(messages.some((m) => /^Sub-agents: 1 running, 0 done · [2-9]s · .* · quiet running \d+s$/.test(m))).toBe(
      true,
    );
  } finally {
    await c.close();
  }
}, 120_000);

test("2026-07-28: a retry sent again after its call ended is answered from the record — no second child, no second round", async () => {
  const s = rawServer();
  try {
    const marker = `replay-${Date.now()}`;
    const call = {
      name: "delegate_to_subagents",
      arguments: { tasks: [{ name: marker, prompt: `once ${script([{ text: `done ${marker}` }])}` }] },
    };
    s.send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { ...call, _meta: MODERN_META } });
    const round = (await s.answer(1)).result;
    expect(round.resultType).toBe("input_required");
    const retry = {
      ...call,
      _meta: MODERN_META,
      inputResponses: { roots: { roots: [{ uri: `file://${world.workDir}` }] } },
      requestState: round.requestState,
    };
    s.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: retry });
    const first = (await s.answer(2)).result;
    expect(first.structuredContent.tasks[0].status).toBe("completed");
    s.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: retry });
    const again = (await s.answer(3)).result;
    expect(again.structuredContent.tasks[0].sessionId).toBe(first.structuredContent.tasks[0].sessionId);
    expect(textOf(again)).toContain(`done ${marker}`);
    const rows = (await cli(world, ["sessions", "--json"])).json.filter((r) => r.name === marker);
    expect(rows).toHaveLength(1);
    expect(
      world.server.requests.filter((q) => JSON.stringify(q.messages ?? []).includes(`once [[script`)),
    ).toHaveLength(1);
  } finally {
    s.close();
    await s.proc.exited;
  }
}, 60_000);

test("input is checked: a request without a method, jsonrpc 1.0, an object id, a 50 MB unknown session id (answered, its echo bounded), and batches only on 2025-03-26", async () => {
  const s = rawServer();
  try {
    s.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {} },
    });
    await s.answer(1);
    s.send({ jsonrpc: "2.0", id: 2 });
    expect((await s.answer(2)).error.code).toBe(-32600);
    s.send({ jsonrpc: "1.0", id: 3, method: "ping" });
    expect((await s.answer(3)).error.code).toBe(-32600);
    s.send({ jsonrpc: "2.0", id: { a: 1 }, method: "ping" });
    expect((await s.answer(null)).error.code).toBe(-32600);
    const huge = "x".repeat(50 * 1024 * 1024);
    s.send({
      jsonrpc: "2.0",
      id: 4,
      method: "tools/call",
      params: { name: "get_subagent_output", arguments: { sessionId: huge } },
    });
    const unknown = (await s.answer(4)).result;
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown).length).toBeLessThan(400);
    s.send([
      { jsonrpc: "2.0", id: 5, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 6, method: "tools/list" },
    ]);
    const batch = await until("the batch's answer", () => s.lines.find((l) => Array.isArray(l)));
    expect(batch.map((m: any) => m.id)).toEqual([5, 6]);
    expect(batch[1].result.tools).toHaveLength(5);
  } finally {
    s.close();
    await s.proc.exited;
  }
}, 60_000);
