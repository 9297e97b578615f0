// `subagents mcp` (docs/mcp.md): what an MCP client waits for. (1) The server's start until it has answered
// `initialize` and `tools/list`, against `subagents --version`. (2) One trivial task through MCP — from the server's
// start to the tool result, and the tool call alone on a connected client — against the same task through
// `subagents delegate --json`. Alternating rounds; medians (min–max). `bun bench/mcp-front.ts [rounds]`.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { script } from "../src/scripted/model-server.ts";
import { BIN, benchWorld, fmt, measure, ratio, stat, table } from "./lib.ts";

const N = Number(process.argv[2] ?? 10);

/** Spawn to the answer of `tools/list` (the server's whole opening), then stdin closed and the exit awaited. */
async function opening(env: Record<string, string>, cwd: string): Promise<number> {
  const t0 = performance.now();
  const p = Bun.spawn({ cmd: [BIN, "mcp"], env, cwd, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  const init = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } };
  p.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: init })}\n`);
  p.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`);
  p.stdin.flush();
  const reader = p.stdout.getReader();
  let text = "";
  while (!/"id":2[,}]/.test(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the server ended before answering: ${text}`);
    text += new TextDecoder().decode(value);
  }
  const ms = performance.now() - t0;
  p.stdin.end();
  await p.exited;
  return ms;
}

async function mcpTask(
  env: Record<string, string>,
  cwd: string,
  prompt: string,
): Promise<{ whole: number; call: number }> {
  const t0 = performance.now();
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StdioClientTransport({ command: BIN, args: ["mcp"], env, cwd, stderr: "ignore" }));
  const t1 = performance.now();
  const r = await client.callTool({ name: "delegate_to_subagents", arguments: { tasks: [{ name: "t", prompt }] } });
  const t2 = performance.now();
  if (r.isError) throw new Error(JSON.stringify(r.content));
  await client.close();
  return { whole: t2 - t0, call: t2 - t1 };
}

export async function mcpFront(): Promise<string> {
  const world = await benchWorld();
  try {
    const env = world.env;
    const cwd = world.workDir;
    const version: number[] = [];
    const open: number[] = [];
    const cliTask: number[] = [];
    const whole: number[] = [];
    const call: number[] = [];
    for (let i = 0; i < N; i++) {
      version.push((await measure([BIN, "--version"], { env, cwd })).wallMs);
      open.push(await opening(env, cwd));
      const prompt = `bench ${i} ${script([{ text: "ok" }])}`;
      cliTask.push((await measure([BIN, "delegate", "--json", prompt], { env, cwd })).wallMs);
      const m = await mcpTask(env, cwd, prompt);
      whole.push(m.whole);
      call.push(m.call);
    }
    const [v, o, c, w, k] = [version, open, cliTask, whole, call].map((x) => stat(x));
    return [
      `### subagents mcp (${N} rounds)`,
      "",
      table(
        ["what", "median (min–max)", "ratio"],
        [
          ["`subagents --version`", fmt(v, " ms", 1), "1.00×"],
          [
            "`subagents mcp`: start → `initialize` and `tools/list` answered",
            fmt(o, " ms", 1),
            ratio(o.median, v.median),
          ],
          ["one task: `subagents delegate --json`", fmt(c, " ms", 1), "1.00×"],
          ["one task over MCP: server start → tool result", fmt(w, " ms", 1), ratio(w.median, c.median)],
          ["one task over MCP: the tool call on a connected client", fmt(k, " ms", 1), ratio(k.median, c.median)],
        ],
      ),
    ].join("\n");
  } finally {
    await world.close();
  }
}

if (import.meta.main) console.log(await mcpFront());
