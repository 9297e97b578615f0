// The MCP wire of `subagents mcp` (src/mcp/protocol/): both eras' openings, errors, cancellation, and a tool's
// input_required round — returned as is on the 2026-07-28 revision, pushed to a 2025 client and the tool run again;
// ids and versions checked, bounded echoes, batches where the revision has them, requests to the client tried once
// with a timeout (never a loop), and the Tasks extension's methods.
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
    write: (m) => out.push(...(Array.isArray(m) ? m : [m])),
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
  expect(rounds[0].caps).toEqual({ elicitation: true, roots: false, tasks: false });
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
  expect(h.out).toContainEqual({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: pushed.id, reason: "no longer needed" },
  });
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

test("ids and versions are checked: jsonrpc other than 2.0, an object id, an id without a method, an id in use — each answered with an error", async () => {
  let release = () => {};
  const h = harness([
    {
      name: "wait",
      description: "",
      inputSchema: {},
      handle: () => new Promise((r) => (release = () => r({ content: [{ type: "text", text: "ok" }] }))),
    },
  ]);
  h.s.receive(JSON.stringify({ jsonrpc: "1.0", id: 1, method: "ping" }));
  expect((await h.reply(1)).error?.code).toBe(-32600);
  h.s.receive(JSON.stringify({ jsonrpc: "2.0", id: { x: 1 }, method: "ping" }));
  await Bun.sleep(5);
  expect(h.out.at(-1)).toMatchObject({ id: null, error: { code: -32600 } });
  h.send({ id: 2 });
  expect((await h.reply(2)).error).toEqual({ code: -32600, message: "Invalid request: an id without a method" });
  h.send({ id: 3, method: "tools/call", params: { name: "wait" } });
  h.send({ id: 3, method: "ping" });
  expect((await h.reply(3)).error?.message).toBe("Invalid request: id 3 is in use");
  release();
  await Bun.sleep(10);
  expect(h.out.filter((m) => m.id === 3).map((m) => (m.result ? "result" : "error"))).toEqual(["error", "result"]);
  // A notification that is not JSON-RPC 2.0 gets nothing (there is no id to answer to).
  const before = h.out.length;
  h.s.receive(JSON.stringify({ jsonrpc: "1.0", method: "notifications/initialized" }));
  await Bun.sleep(5);
  expect(h.out.length).toBe(before);
});

test("what an error quotes of the client's input is bounded: a 5 MB method name or tool name comes back as 120 characters and its length", async () => {
  const h = harness();
  const huge = "m".repeat(5_000_000);
  h.send({ id: 1, method: huge });
  const e = (await h.reply(1)).error!;
  expect(e.code).toBe(-32601);
  expect(e.message.length).toBeLessThan(200);
  expect(e.message).toEndWith("… (5000000 characters)");
  h.send({ id: 2, method: "tools/call", params: { name: huge } });
  expect((await h.reply(2)).error!.message.length).toBeLessThan(200);
});

test("batches: answered as one array on 2025-03-26 (notifications get no entry), refused as one error on every other revision", async () => {
  const h = harness();
  h.s.receive(
    JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26" } }]),
  );
  expect(h.out.at(-1)).toMatchObject({ id: null, error: { code: -32600 } });
  h.send({ id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {} } });
  await h.reply(1);
  const batches: Message[][] = [];
  const s = new McpSession({
    info: { name: "subagents", version: "0" },
    instructions: "",
    tools: [],
    state: new RequestStateCodec(60_000),
    write: (m) => {
      if (Array.isArray(m)) batches.push(m);
    },
  });
  s.receive(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26" } }));
  s.receive(
    JSON.stringify([
      { jsonrpc: "2.0", id: 2, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 3, method: "nope" },
      { jsonrpc: "1.0", id: 4, method: "ping" },
    ]),
  );
  for (let i = 0; i < 100 && !batches.length; i++) await Bun.sleep(5);
  expect(batches[0].map((m) => [m.id, m.result ? "result" : m.error?.code])).toEqual([
    [2, "result"],
    [3, -32601],
    [4, -32600],
  ]);
});

/** A tool that needs the client's roots, as delegate_to_subagents does. */
function rootsTool(seen: ToolContext[]): ToolDef {
  return {
    name: "roots",
    description: "",
    inputSchema: {},
    async handle(_a, ctx) {
      seen.push({ ...ctx });
      const state = ctx.requestState as { asked?: boolean } | undefined;
      if (ctx.caps.roots && !("roots" in ctx.inputResponses)) {
        if (!state?.asked)
          return inputRequired(
            { roots: { method: "roots/list", params: {}, timeoutMs: 50 } },
            h0.state.mint({ asked: true }),
          );
        ctx.rootsUnreadable("no answer");
      }
      return { content: [{ type: "text", text: JSON.stringify(ctx.inputResponses.roots ?? null) }] };
    },
  };
}
let h0: ReturnType<typeof harness>;

test("2025: roots/list answered with an error is asked once, the call goes on without roots, one warning, and the next call does not ask", async () => {
  const seen: ToolContext[] = [];
  const warnings: string[] = [];
  const out: Message[] = [];
  const state = new RequestStateCodec<unknown>(60_000);
  const s = new McpSession({
    info: { name: "subagents", version: "0" },
    instructions: "",
    tools: [rootsTool(seen)],
    state,
    warn: (w) => warnings.push(w),
    write: (m) => {
      for (const one of Array.isArray(m) ? m : [m]) {
        out.push(one);
        // The client: every roots/list gets an error.
        if (one.method === "roots/list")
          s.receive(JSON.stringify({ jsonrpc: "2.0", id: one.id, error: { code: -32603, message: "no roots here" } }));
      }
    },
  });
  h0 = { state } as never;
  s.receive(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: { roots: {} } },
    }),
  );
  for (const id of [2, 3]) {
    s.receive(JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "roots", arguments: {} } }));
    for (let i = 0; i < 100 && !out.some((m) => m.id === id && m.result); i++) await Bun.sleep(5);
    expect(out.find((m) => m.id === id)?.result).toEqual({ content: [{ type: "text", text: "null" }] });
  }
  expect(out.filter((m) => m.method === "roots/list")).toHaveLength(1);
  expect(warnings).toEqual([
    "the MCP client's roots could not be read (no roots here): tasks run in the server's folder",
  ]);
});

test("2025: a roots/list the client never answers is withdrawn after its timeout, and the call goes on", async () => {
  const seen: ToolContext[] = [];
  const out: Message[] = [];
  const state = new RequestStateCodec<unknown>(60_000);
  h0 = { state } as never;
  const s = new McpSession({
    info: { name: "subagents", version: "0" },
    instructions: "",
    tools: [rootsTool(seen)],
    state,
    write: (m) => out.push(...(Array.isArray(m) ? m : [m])),
  });
  s.receive(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: { roots: {} } },
    }),
  );
  s.receive(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "roots", arguments: {} } }));
  for (let i = 0; i < 200 && !out.some((m) => m.id === 2); i++) await Bun.sleep(5);
  const asked = out.find((m) => m.method === "roots/list")!;
  expect(out).toContainEqual({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: asked.id, reason: "no answer within 0 s" },
  });
  expect(out.find((m) => m.id === 2)?.result).toBeDefined();
});

test("2025: a tool that asks again for what the client could not answer ends its request with an error (never a loop)", async () => {
  let rounds = 0;
  const out: Message[] = [];
  const s = new McpSession({
    info: { name: "subagents", version: "0" },
    instructions: "",
    tools: [
      {
        name: "stubborn",
        description: "",
        inputSchema: {},
        handle: async () => {
          rounds++;
          return inputRequired({ q: elicit("again?", { type: "object" }) });
        },
      },
    ],
    state: new RequestStateCodec(60_000),
    write: (m) => {
      for (const one of Array.isArray(m) ? m : [m]) {
        out.push(one);
        if (one.method === "elicitation/create")
          s.receive(JSON.stringify({ jsonrpc: "2.0", id: one.id, error: { code: -1, message: "no" } }));
      }
    },
  });
  s.receive(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: { elicitation: {} } },
    }),
  );
  s.receive(
    JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "stubborn", arguments: {} } }),
  );
  for (let i = 0; i < 100 && !out.some((m) => m.id === 2); i++) await Bun.sleep(5);
  expect(out.find((m) => m.id === 2)?.error?.code).toBe(-32603);
  expect(rounds).toBe(2);
  expect(out.filter((m) => m.method === "elicitation/create")).toHaveLength(1);
});

test("Tasks: server/discover advertises the extension; tasks/* need it declared on the request (-32021), then reach the task host; a tool's task handle is returned as resultType task", async () => {
  const calls: string[] = [];
  const view = {
    taskId: "t1",
    status: "working" as const,
    createdAt: "2026-01-01T00:00:00.000Z",
    lastUpdatedAt: "2026-01-01T00:00:00.000Z",
    ttlMs: 1000,
    result: { content: [] },
  };
  const out: Message[] = [];
  const s = new McpSession({
    info: { name: "subagents", version: "0" },
    instructions: "",
    tools: [
      { name: "long", description: "", inputSchema: {}, handle: async () => ({ resultType: "task", task: view }) },
    ],
    state: new RequestStateCodec(60_000),
    write: (m) => out.push(...(Array.isArray(m) ? m : [m])),
    tasks: {
      get: (id) => {
        calls.push(`get ${id}`);
        return { ...view, status: "completed" };
      },
      update: (id, r) => void calls.push(`update ${id} ${JSON.stringify(r)}`),
      cancel: (id) => void calls.push(`cancel ${id}`),
    },
  });
  const reply = async (id: number) => {
    for (let i = 0; i < 100 && !out.some((m) => m.id === id); i++) await Bun.sleep(5);
    return out.find((m) => m.id === id)!;
  };
  const send = (m: Record<string, unknown>) => s.receive(JSON.stringify({ jsonrpc: "2.0", ...m }));
  const plain = { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } };
  const tasks = {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
    },
  };
  send({ id: 1, method: "server/discover", params: plain });
  expect((await reply(1)).result?.capabilities).toEqual({
    tools: {},
    extensions: { "io.modelcontextprotocol/tasks": {} },
  });
  send({ id: 2, method: "tasks/get", params: { ...plain, taskId: "t1" } });
  expect((await reply(2)).error).toMatchObject({
    code: -32021,
    data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
  });
  send({ id: 3, method: "tasks/get", params: { ...tasks, taskId: "t1" } });
  // A completed task carries its result; resultType is "complete" on tasks/get.
  expect((await reply(3)).result).toMatchObject({
    resultType: "complete",
    status: "completed",
    result: { content: [] },
  });
  send({
    id: 4,
    method: "tasks/update",
    params: { ...tasks, taskId: "t1", inputResponses: { q1: { action: "decline" } } },
  });
  send({ id: 5, method: "tasks/cancel", params: { ...tasks, taskId: "t1" } });
  expect((await reply(5)).result).toMatchObject({ resultType: "complete" });
  send({ id: 6, method: "tools/call", params: { ...tasks, name: "long", arguments: {} } });
  const handle = (await reply(6)).result!;
  expect(handle).toMatchObject({ resultType: "task", taskId: "t1", status: "working", ttlMs: 1000 });
  // A working task carries no result.
  expect(handle.result).toBeUndefined();
  expect(calls).toEqual(["get t1", 'update t1 {"q1":{"action":"decline"}}', "cancel t1"]);
  // A 2025 client is told of no extension.
  send({ id: 7, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {} } });
  expect((await reply(7)).result?.capabilities).toEqual({ tools: {} });
});
