// The MCP wire of `subagents mcp` (src/mcp/protocol/): both eras' openings, errors, cancellation, and a tool's
// input_required round — returned as is on the 2026-07-28 revision, pushed to a 2025 client and the tool run again.
// The end-to-end tests drive the same code with the official SDK client and Codex (test/e2e/mcp/).
import { expect, test } from "bun:test";
import { RequestStateCodec } from "../../../src/mcp/protocol/request-state.ts";
import { McpSession, type ToolContext, type ToolDef } from "../../../src/mcp/protocol/session.ts";
import { elicit, inputRequired, type Message } from "../../../src/mcp/protocol/wire.ts";

const MODERN = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
};

function harness(tools: ToolDef[] = []) {
  const out: Message[] = [];
  const state = new RequestStateCodec<unknown>(60_000);
  const s = new McpSession({
    info: { name: "subagents", version: "0.0.0" },
    instructions: "hi",
    tools,
    state,
    write: (m) => out.push(m),
  });
  const send = (m: Record<string, unknown>) => s.receive(JSON.stringify({ jsonrpc: "2.0", ...m }));
  const reply = async (id: unknown) => {
    for (let i = 0; i < 200; i++) {
      const m = out.find((x) => x.id === id && x.method === undefined);
      if (m) return m;
      await Bun.sleep(5);
    }
    throw new Error(`no reply to ${id}: ${JSON.stringify(out)}`);
  };
  return { s, out, send, reply, state };
}

test("initialize: a 2025 revision the server knows is echoed, an unknown one gets the newest; discover lists 2026-07-28", async () => {
  const h = harness();
  h.send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {} } });
  expect((await h.reply(1)).result).toMatchObject({ protocolVersion: "2025-06-18", serverInfo: { name: "subagents" } });
  h.send({ id: 2, method: "initialize", params: { protocolVersion: "2099-01-01", capabilities: {} } });
  expect((await h.reply(2)).result?.protocolVersion).toBe("2025-11-25");
  h.send({ id: 3, method: "server/discover", params: { _meta: MODERN } });
  expect((await h.reply(3)).result).toMatchObject({
    resultType: "complete",
    supportedVersions: ["2026-07-28"],
    capabilities: { tools: {} },
    _meta: { "io.modelcontextprotocol/serverInfo": { name: "subagents" } },
  });
});

test("errors: an unsupported modern revision (-32022 with what is supported), an unknown method, an unknown tool, a line that is not JSON", async () => {
  const h = harness();
  h.send({
    id: 1,
    method: "tools/list",
    params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2030-01-01" } },
  });
  expect((await h.reply(1)).error).toEqual({
    code: -32022,
    message: "Unsupported protocol version",
    data: { supported: ["2026-07-28"], requested: "2030-01-01" },
  });
  h.send({ id: 2, method: "resources/list", params: {} });
  expect((await h.reply(2)).error?.code).toBe(-32601);
  h.send({ id: 3, method: "tools/call", params: { name: "nope" } });
  expect((await h.reply(3)).error).toEqual({ code: -32602, message: "Unknown tool: nope" });
  h.s.receive("{not json");
  expect(h.out.at(-1)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
});

test("notifications/cancelled aborts the call's signal, and nothing is sent for it", async () => {
  let seen: AbortSignal | undefined;
  const h = harness([
    {
      name: "wait",
      description: "",
      inputSchema: {},
      handle: (_a, ctx) =>
        new Promise((resolve) => {
          seen = ctx.signal;
          ctx.signal.addEventListener("abort", () => resolve({ content: [{ type: "text", text: "late" }] }));
        }),
    },
  ]);
  h.send({ id: 7, method: "tools/call", params: { name: "wait", arguments: {} } });
  await Bun.sleep(10);
  h.send({ method: "notifications/cancelled", params: { requestId: 7, reason: "Stop" } });
  await Bun.sleep(20);
  expect(seen?.aborted).toBe(true);
  expect(seen?.reason).toBe("Stop");
  expect(h.out.filter((m) => m.id === 7)).toEqual([]);
});

/** A tool that asks once, then answers with what it was told (and the state it carried). */
function asking(rounds: ToolContext[], until?: Promise<unknown>): ToolDef {
  return {
    name: "ask",
    description: "",
    inputSchema: {},
    async handle(_a, ctx) {
      rounds.push({ ...ctx });
      if (!("q" in ctx.inputResponses) && !ctx.requestState)
        return { ...inputRequired({ q: elicit("Which?", { type: "object" }) }, this.state!.mint({ round: 1 })), until };
      return { content: [{ type: "text", text: `got ${JSON.stringify(ctx.inputResponses.q ?? null)}` }] };
    },
  } as ToolDef & { state?: RequestStateCodec<unknown> };
}

test("2026-07-28: input_required goes to the client as is; its retry carries the answer and the verified state", async () => {
  const rounds: ToolContext[] = [];
  const tool = asking(rounds) as ToolDef & { state?: RequestStateCodec<unknown> };
  const h = harness([tool]);
  tool.state = h.state;
  h.send({ id: 1, method: "tools/call", params: { _meta: MODERN, name: "ask", arguments: {} } });
  const first = (await h.reply(1)).result as Record<string, any>;
  expect(first.resultType).toBe("input_required");
  expect(first.inputRequests.q).toEqual({
    method: "elicitation/create",
    params: { mode: "form", message: "Which?", requestedSchema: { type: "object" } },
  });
  expect(first.until).toBeUndefined();
  expect(rounds[0].caps).toEqual({ elicitation: true, roots: false });
  h.send({
    id: 2,
    method: "tools/call",
    params: {
      _meta: MODERN,
      name: "ask",
      arguments: {},
      inputResponses: { q: { action: "accept" } },
      requestState: first.requestState,
    },
  });
  expect((await h.reply(2)).result).toMatchObject({
    resultType: "complete",
    content: [{ text: 'got {"action":"accept"}' }],
  });
  expect(rounds[1].requestState).toEqual({ round: 1 });
  h.send({
    id: 3,
    method: "tools/call",
    params: { _meta: MODERN, name: "ask", requestState: `${first.requestState}x` },
  });
  expect((await h.reply(3)).error).toEqual({ code: -32602, message: "Invalid or expired requestState" });
});

test("2025: the input request is pushed as elicitation/create and the tool runs again with the answer, in the same request", async () => {
  const rounds: ToolContext[] = [];
  const tool = asking(rounds) as ToolDef & { state?: RequestStateCodec<unknown> };
  const h = harness([tool]);
  tool.state = h.state;
  h.send({ id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: { elicitation: {} } } });
  await h.reply(1);
  h.send({ id: 2, method: "tools/call", params: { name: "ask", arguments: {}, _meta: { progressToken: "p" } } });
  await Bun.sleep(20);
  const pushed = h.out.find((m) => m.method === "elicitation/create")!;
  expect(pushed.params).toEqual({ mode: "form", message: "Which?", requestedSchema: { type: "object" } });
  h.send({ id: pushed.id, result: { action: "accept", content: { answer: "b" } } });
  expect((await h.reply(2)).result).toEqual({
    content: [{ type: "text", text: 'got {"action":"accept","content":{"answer":"b"}}' }],
  });
  expect(rounds.map((r) => [r.progressToken, r.requestState])).toEqual([
    ["p", undefined],
    ["p", { round: 1 }],
  ]);
});

test("2025: a pushed question the tool no longer needs (its `until`) is withdrawn with notifications/cancelled and the tool runs again", async () => {
  const rounds: ToolContext[] = [];
  let release = () => {};
  const tool = asking(rounds, new Promise<void>((r) => (release = r))) as ToolDef & {
    state?: RequestStateCodec<unknown>;
  };
  const h = harness([tool]);
  tool.state = h.state;
  h.send({ id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: { elicitation: {} } } });
  h.send({ id: 2, method: "tools/call", params: { name: "ask", arguments: {} } });
  await Bun.sleep(20);
  const pushed = h.out.find((m) => m.method === "elicitation/create")!;
  release();
  expect((await h.reply(2)).result).toEqual({ content: [{ type: "text", text: "got null" }] });
  expect(h.out).toContainEqual({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: pushed.id } });
});

test("requestState: minted here, verified here; altered, foreign or expired state is refused", async () => {
  const a = new RequestStateCodec<{ call: string }>(60_000);
  const b = new RequestStateCodec<{ call: string }>(60_000);
  const s = a.mint({ call: "c1" });
  expect(a.verify(s)).toEqual({ call: "c1" });
  expect(b.verify(s)).toBeNull();
  expect(a.verify(`${s.split(".")[0]}.${"A".repeat(43)}`)).toBeNull();
  expect(a.verify("nonsense")).toBeNull();
  const short = new RequestStateCodec<{ call: string }>(-1);
  expect(short.verify(short.mint({ call: "c2" }))).toBeNull();
});
