// `subagents mcp` for long work (docs/mcp.md): (1) what a client can hand its model of a 3 × 60 KB delegation — the
// structuredContent the server returns, against each output bounded alone as before (50 KB per task), and how
// much of it comes before the first output (what Codex's head-and-tail cut and Claude Code's 2 KB preview keep);
// (2) how long a client waits for a 2-second delegation: the task handle (Tasks extension) against the result of
// the same call answered directly; (3) what tools/list costs a client's prompt, the MCP schemas (no `context`)
// against pi's. Alternating rounds; medians (min–max). `bun bench/mcp-long-work.ts [rounds]`.
import { structuredTasks } from "../src/core/call/results.ts";
import { DELEGATE_SCHEMA, SUBAGENT_SCHEMA } from "../src/core/call/schemas.ts";
import type { TaskOutcome } from "../src/core/run/task-types.ts";
import { truncateHeadTail } from "../src/core/truncate.ts";
import { runResult } from "../src/core/types.ts";
import { toolSpec } from "../src/mcp/schemas.ts";
import { script } from "../src/scripted/model-server.ts";
import { BIN, benchWorld, fmt, ratio, stat, table } from "./lib.ts";

const N = Number(process.argv[2] ?? 5);

const outcomes: TaskOutcome[] = ["alpha", "beta", "gamma"].map((n) => ({
  sessionId: `${n}${"0".repeat(16 - n.length)}`,
  name: n,
  agent: "default",
  result: runResult({ status: "completed", output: `${n.toUpperCase()}-0123456789`.padEnd(100, ".").repeat(600) }),
}));

/** Each output cut alone to 50 KB (head and tail), the rule before the whole was bounded. */
function perTask(): unknown {
  return {
    tasks: outcomes.map((o) => ({
      name: o.name,
      sessionId: o.sessionId,
      agent: o.agent,
      status: "completed",
      output: truncateHeadTail(o.result.output, { maxBytes: 50 * 1024, maxLines: 2000 }).text,
      usage: { input: 0, output: 0, cost: 0, turns: 0 },
    })),
    usage: { input: 0, output: 0, cost: 0 },
  };
}

/** Bytes of JSON before the first output: where every task's status must be for a client that keeps the start. */
const beforeFirstOutput = (json: string) => Buffer.byteLength(json.slice(0, json.indexOf('"output"')));
/** Bytes until every task's session id has been named (with its status beside it). */
const toEveryId = (json: string) =>
  Math.max(...outcomes.map((o) => Buffer.byteLength(json.slice(0, json.indexOf(o.sessionId) + o.sessionId.length))));

const META = (tasks: boolean) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": tasks ? { extensions: { "io.modelcontextprotocol/tasks": {} } } : {},
});

/** One modern tools/call on a fresh server: the time to its first answer (a task handle, or the result). */
async function firstAnswer(env: Record<string, string>, cwd: string, tasks: boolean, i: number): Promise<number> {
  const p = Bun.spawn({ cmd: [BIN, "mcp"], env, cwd, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const prompt = `long ${i} ${tasks} ${script([{ tool: "bash", args: { command: "sleep 2" } }, { text: "ok" }])}`;
  const params = {
    name: "delegate_to_subagents",
    arguments: { tasks: [{ name: "t", prompt }] },
    _meta: META(tasks),
  };
  // The server's opening first, so only the call is timed.
  p.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "ping", params: { _meta: META(false) } })}\n`);
  p.stdin.flush();
  const reader = p.stdout.getReader();
  let text = "";
  const until = async (re: RegExp) => {
    while (!re.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the server ended: ${text}`);
      text += new TextDecoder().decode(value);
    }
  };
  await until(/"id":0[,}]/);
  const t0 = performance.now();
  p.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params })}\n`);
  p.stdin.flush();
  await until(/"id":1[,}]/);
  const ms = performance.now() - t0;
  // A task's children stop with the server; the direct call has ended.
  p.stdin.end();
  await p.exited;
  return ms;
}

export async function mcpLongWork(): Promise<string> {
  const before = JSON.stringify(perTask());
  const after = JSON.stringify(structuredTasks(outcomes));
  const piTools = JSON.stringify([DELEGATE_SCHEMA, SUBAGENT_SCHEMA]);
  const mcpTools = JSON.stringify([toolSpec("delegate_to_subagents").inputSchema, toolSpec("subagent").inputSchema]);
  const world = await benchWorld();
  const handle: number[] = [];
  const result: number[] = [];
  try {
    for (let i = 0; i < N; i++) {
      handle.push(await firstAnswer(world.env, world.workDir, true, i));
      result.push(await firstAnswer(world.env, world.workDir, false, i));
    }
  } finally {
    await world.close();
  }
  const [h, r] = [handle, result].map((x) => stat(x));
  const kb = (s: string) => `${(Buffer.byteLength(s) / 1024).toFixed(1)} KB`;
  return [
    "### A 3 × 60 KB delegation: what a client can hand its model",
    "",
    table(
      ["structuredContent", "size", "bytes before the first output", "bytes until every task's status and id"],
      [
        [
          "each output bounded alone (before)",
          kb(before),
          String(beforeFirstOutput(before)),
          String(toEveryId(before)),
        ],
        ["bounded in all, statuses first (now)", kb(after), String(beforeFirstOutput(after)), String(toEveryId(after))],
      ],
    ),
    "",
    `### A 2-second delegation (${N} rounds): the client's wait for its first answer`,
    "",
    table(
      ["answer", "median (min–max)", "ratio"],
      [
        ["the result, call answered directly", fmt(r, " ms", 0), "1.00×"],
        ["a task handle (Tasks extension)", fmt(h, " ms", 0), ratio(h.median, r.median)],
      ],
    ),
    "",
    `tools/list input schemas of the two tools that run children: pi's ${piTools.length} characters, MCP's ${mcpTools.length} (${ratio(mcpTools.length, piTools.length)}).`,
  ].join("\n");
}

if (import.meta.main) console.log(await mcpLongWork());
