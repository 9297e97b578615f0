// Traces end to end: `subagents delegate` with real pi children against the scripted model server, its spans
// collected by an OTLP receiver on 127.0.0.1 — the tree, names and attributes; the trace continued from our
// TRACEPARENT and handed to each child; a collector that is down; tracing off by default.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createServer } from "node:net";
import { messageText, script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld, summaryOf, taskWhy } from "../../support/pi-env.ts";
import { type OtlpReceiver, type ReceivedSpan, spanTree, startOtlpReceiver } from "../../support/otlp-receiver.ts";

let world: PiWorld;
let receiver: OtlpReceiver;
beforeAll(async () => {
  [world, receiver] = await Promise.all([piWorld(), startOtlpReceiver()]);
});
afterAll(async () => {
  await Promise.all([world.close(), receiver.close()]);
});

const TRACE = "0af7651916cd43dd8448eb211c80319c";
const PARENT = "b7ad6b7169203331";
const TRACEPARENT = `00-${TRACE}-${PARENT}-01`;

/** Two tasks: one prints the TRACEPARENT its child got, one fails at its first model request. */
function tasks(marker: string): string[] {
  return [
    `${marker} prints ${script([
      { tool: "bash", args: { command: "printenv TRACEPARENT; printenv TRACESTATE" } },
      { finalize: { status: "SUCCESS", result: `${marker} done` } },
    ])}`,
    `${marker} fails ${script([{ status: 400, message: `scripted refusal ${marker}` }])}`,
  ];
}

/** What the child's bash printed, as the next request of its task carried it back to the model. */
function printed(marker: string): string {
  const req = world.server.requests.find(
    (r) => JSON.stringify(r.messages).includes(`${marker} prints`) && r.messages?.some((m) => m.role === "tool"),
  );
  const tool = req?.messages?.find((m) => m.role === "tool");
  return typeof tool?.content === "string" ? tool.content : JSON.stringify(tool?.content ?? "");
}

const traceEnv = (endpoint: string) => ({
  OTEL_TRACES_EXPORTER: "otlp",
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_SERVICE_NAME: "agents-under-test",
  TRACEPARENT,
  TRACESTATE: "vendor=abc",
});

test("a delegation's trace: workflow → one agent per task → chats and tools; continued from TRACEPARENT, handed to the child", async () => {
  const marker = `traced-${Date.now()}`;
  const r = await cli(world, ["delegate", ...tasks(marker), "--json"], { env: traceEnv(receiver.url) });
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).not.toContain("traces not exported");
  const [ok, bad] = summaryOf(r.json);
  expect(ok.status, taskWhy(ok)).toBe("completed");
  expect(bad.status).toBe("error");
  // The spans left before the CLI exited.
  const spans = receiver.spans.filter((s) => s.traceId === TRACE);
  const root = spans.find((s) => s.name === "invoke_workflow") as ReceivedSpan;
  expect(root, spans.map((s) => s.name).join(", ")).toBeDefined();
  expect(root.parentSpanId).toBe(PARENT);
  expect(root.traceState).toBe("vendor=abc");
  expect(root.resource["service.name"]).toBe("agents-under-test");
  const agents = spans.filter((s) => s.parentSpanId === root.spanId);
  const okSpan = agents.find((s) => s.attributes["gen_ai.conversation.id"] === ok.sessionId) as ReceivedSpan;
  const badSpan = agents.find((s) => s.attributes["gen_ai.conversation.id"] === bad.sessionId) as ReceivedSpan;
  expect(spanTree(spans, okSpan)).toBe(
    [
      "invoke_agent default",
      "  start",
      "  chat fake-model",
      "  execute_tool bash",
      "  chat fake-model",
      "  execute_tool subagent_finalize",
    ].join("\n"),
  );
  expect(okSpan.attributes).toMatchObject({
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": "default",
    "gen_ai.provider.name": "fake",
    "gen_ai.response.model": "fake-model",
    "subagents.task.name": "task-1",
    "subagents.runner": "local",
    "subagents.runtime": "pi",
  });
  expect(Number(okSpan.attributes["gen_ai.usage.input_tokens"])).toBeGreaterThan(0);
  expect(Number(okSpan.attributes["gen_ai.usage.output_tokens"])).toBeGreaterThan(0);
  expect(okSpan.status.code).toBe(0);
  expect(badSpan.status.code).toBe(2);
  expect(badSpan.status.message).toContain(`scripted refusal ${marker}`);
  expect(badSpan.attributes["error.type"]).toBe("SUBAGENT_FAILED");
  expect(root.status).toEqual({ code: 2, message: "1 of 2 tasks failed" });
  // Real times: every child span lies within its agent's, and the tool ran after the chat that asked for it.
  for (const s of spans.filter((x) => x.parentSpanId === okSpan.spanId)) {
    expect(s.startNs >= okSpan.startNs && s.endNs <= okSpan.endNs, s.name).toBe(true);
  }
  const [chat1] = spans.filter((s) => s.parentSpanId === okSpan.spanId && s.name.startsWith("chat"));
  const bash = spans.find((s) => s.parentSpanId === okSpan.spanId && s.name === "execute_tool bash") as ReceivedSpan;
  expect(bash.startNs >= chat1.endNs).toBe(true);
  // The child continued the trace under its own agent span.
  expect(printed(marker)).toContain(`00-${TRACE}-${okSpan.spanId}-01`);
  expect(printed(marker)).toContain("vendor=abc");
}, 90_000);

test("kept children under a traced call: tasks share one process, each task's commands under its own agent span", async () => {
  const marker = `kept-${Date.now()}`;
  const prompts = [1, 2, 3].map(
    (n) =>
      `${marker} task ${n} ${script([
        { tool: "bash", args: { command: "printenv TRACEPARENT; echo ppid=$PPID" } },
        { finalize: { status: "SUCCESS", result: "ok" } },
      ])}`,
  );
  const r = await cli(world, ["delegate", ...prompts, "--concurrency", "1", "--json"], {
    env: traceEnv(receiver.url),
  });
  expect(r.code, r.stderr).toBe(0);
  // A task's own request: its prompt comes first (each prompt also lists its siblings').
  const seen = (n: number) => {
    const req = world.server.requests.find(
      (q) =>
        messageText(q.messages?.find((m) => m.role === "user") ?? { role: "user" }).startsWith(
          `${marker} task ${n} `,
        ) && q.messages?.some((m) => m.role === "tool"),
    );
    return JSON.stringify(req?.messages?.find((m) => m.role === "tool")?.content ?? "");
  };
  // One pi ran all three (a TRACEPARENT per task had made every task start a process, and keep it idle).
  const ppids = [1, 2, 3].map((n) => /ppid=(\d+)/.exec(seen(n))?.[1]);
  expect(new Set(ppids).size, ppids.join(", ")).toBe(1);
  // Each task's bash is under that task's invoke_agent span, not the first task's.
  for (const [i, t] of summaryOf(r.json).entries()) {
    const span = await receiver.waitFor((s) => s.attributes["gen_ai.conversation.id"] === t.sessionId);
    expect(seen(i + 1)).toContain(`00-${TRACE}-${span.spanId}-01`);
  }
});

test("a collector that is down: the delegation ends as it would, with one warning line", async () => {
  const free = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
  const marker = `down-${Date.now()}`;
  const r = await cli(world, ["delegate", tasks(marker)[0], "--json"], {
    env: traceEnv(`http://127.0.0.1:${free}`),
  });
  expect(r.code, r.stderr).toBe(0);
  expect(summaryOf(r.json).map((t) => t.status)).toEqual(["completed"]);
  const warnings = r.stderr.split("\n").filter((l) => l.includes("traces"));
  expect(warnings, r.stderr).toHaveLength(1);
  expect(warnings[0]).toStartWith(`subagents: traces not exported to http://127.0.0.1:${free}/v1/traces: `);
}, 90_000);

test("off by default: nothing is exported, and a child inherits our TRACEPARENT as it is", async () => {
  const before = receiver.requests.length;
  const marker = `untraced-${Date.now()}`;
  const r = await cli(world, ["delegate", tasks(marker)[0], "--json"], {
    env: { TRACEPARENT, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
  });
  expect(r.code, r.stderr).toBe(0);
  expect(printed(marker)).toContain(TRACEPARENT);
  expect(receiver.requests.length).toBe(before);
  expect(r.stderr).not.toContain("traces");
}, 90_000);

test("over MCP: a call's trace hangs under the client's _meta.traceparent, spans flushed after the call", async () => {
  const { connectMcp } = await import("../../support/mcp-client.ts");
  const c = await connectMcp(world, { env: { ...traceEnv(receiver.url), TRACEPARENT: "" } });
  try {
    const mcpTrace = "5bf92f3577b34da6a3ce929d0e0e4736";
    const marker = `mcp-${Date.now()}`;
    const r = await c.client.callTool({
      name: "delegate_to_subagents",
      arguments: { tasks: [{ name: "printer", prompt: tasks(marker)[0] }] },
      _meta: { traceparent: `00-${mcpTrace}-00f067aa0ba902b7-01` },
    });
    expect(r.isError, JSON.stringify(r)).toBeFalsy();
    const root = await receiver.waitFor((s) => s.traceId === mcpTrace && s.name === "invoke_workflow");
    expect(root.parentSpanId).toBe("00f067aa0ba902b7");
    const agent = await receiver.waitFor((s) => s.traceId === mcpTrace && s.name === "invoke_agent default");
    expect(agent.parentSpanId).toBe(root.spanId);
    expect(printed(marker)).toContain(`00-${mcpTrace}-${agent.spanId}-01`);
  } finally {
    await c.close();
  }
}, 90_000);

test("the figures the spans carry, from the store: sessions --json, session --json and subagents usage", async () => {
  const [sessions, usage] = await Promise.all([
    cli(world, ["sessions", "--json", "--limit", "50"]),
    cli(world, ["usage", "--json", "--since", "1h"]),
  ]);
  const rows = sessions.json.filter((r) => r.type === "session");
  const spent = rows.find((r) => r.tokens.input > 0) as Record<string, any>;
  expect(spent, sessions.stdout).toBeDefined();
  expect(spent.durationMs).toBeGreaterThan(0);
  const one = await cli(world, ["session", spent.id, "--json"]);
  expect(one.json[0].usage).toMatchObject({ input: spent.tokens.input, output: spent.tokens.output });
  expect(one.json[0].durationMs).toBe(spent.durationMs);
  expect(usage.code, usage.stderr).toBe(0);
  const byAgent = usage.json.find((r) => r.type === "usage" && r.key === "default") as Record<string, any>;
  expect(byAgent).toMatchObject({ by: "agent" });
  expect(byAgent.runs).toBe(rows.filter((r) => r.agent === "default").length);
  expect(byAgent.failed).toBeGreaterThan(0);
  expect(byAgent.input).toBe(rows.reduce((n, r) => n + r.tokens.input, 0));
  const table = await cli(world, ["usage", "--by", "day"]);
  expect(table.stdout).toMatch(/^DAY\s+RUNS\s+FAILED\s+INPUT\s+OUTPUT\s+CACHE READ\s+COST\s+TIME/m);
  expect(table.stdout).toMatch(/^total\s/m);
}, 60_000);
