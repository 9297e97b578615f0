// Tracing's pure parts: W3C trace context, the OTEL_* switches, both OTLP encodings (decoded by the test receiver's
// protobufjs definitions, which name opentelemetry-proto's field numbers), and a call's span tree built from the
// events the call runner reports.
import { expect, test } from "bun:test";
import { CallTrace } from "../../../src/core/call/call-trace.ts";
import type { CallEvent } from "../../../src/core/call/runner.ts";
import type { ResolvedTask, TaskOutcome } from "../../../src/core/run/task-types.ts";
import {
  formatTraceparent,
  parseTraceparent,
  sessionTraceparent,
  taskSpanId,
  traceEnv,
} from "../../../src/core/trace/context.ts";
import { childSessionFile, sessionIdOfFile } from "../../../src/core/run/session-file.ts";
import { encodeJson, encodeProtobuf } from "../../../src/core/trace/otlp.ts";
import { readTraceConfig } from "../../../src/core/trace/otel-env.ts";
import type { Span, Tracing } from "../../../src/core/trace/span.ts";
import { runResult } from "../../../src/core/types.ts";
import { decodeTraces, type ReceivedSpan, spanTree } from "../../support/otlp-receiver.ts";
import { resolvedTask } from "../../support/resolved-task.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";

test("traceparent: read, written, and refused when malformed (a new trace starts instead)", () => {
  const c = parseTraceparent(`00-${TRACE}-${PARENT}-01`, " vendor=x ");
  expect(c).toEqual({ traceId: TRACE, spanId: PARENT, flags: 1, state: "vendor=x" });
  expect(formatTraceparent(c!)).toBe(`00-${TRACE}-${PARENT}-01`);
  expect(traceEnv(c!)).toEqual({ TRACEPARENT: `00-${TRACE}-${PARENT}-01`, TRACESTATE: "vendor=x" });
  expect(parseTraceparent(`00-${TRACE.toUpperCase()}-${PARENT}-00`)?.flags).toBe(0);
  // A later version may carry more fields; version 00 may not; ff is never valid; all-zero ids are invalid.
  expect(parseTraceparent(`01-${TRACE}-${PARENT}-01-more`)?.traceId).toBe(TRACE);
  for (const bad of [
    `00-${TRACE}-${PARENT}-01-more`,
    `ff-${TRACE}-${PARENT}-01`,
    `00-${"0".repeat(32)}-${PARENT}-01`,
    `00-${TRACE}-${"0".repeat(16)}-01`,
    `00-${TRACE.slice(1)}-${PARENT}-01`,
    "garbage",
    undefined,
  ])
    expect(parseTraceparent(bad), String(bad)).toBeNull();
});

test("the OTEL_* switches: off by default, on for otlp/console or an endpoint, none and OTEL_SDK_DISABLED win", () => {
  expect(readTraceConfig({}, "1.0.0").config).toBeNull();
  expect(readTraceConfig({ TRACEPARENT: `00-${TRACE}-${PARENT}-01` }, "1.0.0").config).toBeNull();
  const on = readTraceConfig({ OTEL_TRACES_EXPORTER: "otlp" }, "1.0.0").config!;
  expect(on.otlp).toEqual({
    url: "http://localhost:4318/v1/traces",
    protocol: "http/protobuf",
    headers: {},
    gzip: false,
    timeoutMs: 2000,
  });
  expect(on.resource).toEqual({ "service.name": "subagents", "service.version": "1.0.0" });
  expect(on.console).toBe(false);
  expect(on.content).toBe(false);
  const full = readTraceConfig(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example:4318/",
      OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=abc%3D1, tenant=t1",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "tenant=t2",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_COMPRESSION: "gzip",
      OTEL_EXPORTER_OTLP_TIMEOUT: "500",
      OTEL_SERVICE_NAME: "ci-agents",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=ci,service.name=ignored",
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
      TRACEPARENT: `00-${TRACE}-${PARENT}-01`,
      TRACESTATE: "v=1",
    },
    "1.0.0",
  ).config!;
  expect(full.otlp).toEqual({
    url: "https://otel.example:4318/v1/traces",
    protocol: "http/json",
    headers: { "x-api-key": "abc=1", tenant: "t2" },
    gzip: true,
    timeoutMs: 500,
  });
  expect(full.resource).toEqual({
    "deployment.environment": "ci",
    "service.name": "ci-agents",
    "service.version": "1.0.0",
  });
  expect(full.content).toBe(true);
  expect(full.parent).toEqual({ traceId: TRACE, spanId: PARENT, flags: 1, state: "v=1" });
  // The signal's own endpoint is taken as it is; a timeout above the bound is held to it.
  const own = readTraceConfig(
    { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:9/custom", OTEL_EXPORTER_OTLP_TIMEOUT: "10000" },
    "1",
  ).config!;
  expect(own.otlp?.url).toBe("http://c:9/custom");
  expect(own.otlp?.timeoutMs).toBe(2000);
  expect(readTraceConfig({ OTEL_TRACES_EXPORTER: "console" }, "1").config).toMatchObject({ console: true });
  expect(
    readTraceConfig({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c" }, "1").config,
  ).toBeNull();
  expect(readTraceConfig({ OTEL_SDK_DISABLED: "true", OTEL_TRACES_EXPORTER: "otlp" }, "1").config).toBeNull();
  // What we do not speak is said in one line; gRPC alone leaves traces off rather than posting to a gRPC port.
  const grpc = readTraceConfig({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, "1");
  expect(grpc.config).toBeNull();
  expect(grpc.warning).toBe("traces: OTEL_EXPORTER_OTLP_PROTOCOL grpc is not supported (http/protobuf, http/json)");
  const zipkin = readTraceConfig({ OTEL_TRACES_EXPORTER: "zipkin,console" }, "1");
  expect(zipkin.config?.console).toBe(true);
  expect(zipkin.warning).toContain("OTEL_TRACES_EXPORTER zipkin is not supported");
  // A timeout that is not a positive number is the bound (-5 had reached setTimeout: Node's TimeoutNegativeWarning).
  for (const t of ["-5", "abc", "0"])
    expect(
      readTraceConfig({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_TIMEOUT: t }, "1").config?.otlp?.timeoutMs,
    ).toBe(2000);
  // An endpoint that is not an http(s) URL is said once at the start (it failed at every export, in fetch()'s words).
  const bare = readTraceConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "127.0.0.1:4318" }, "1");
  expect(bare.config).toBeNull();
  expect(bare.warning).toBe("traces: the OTLP endpoint 127.0.0.1:4318/v1/traces is not an http(s) URL (add http://)");
  expect(readTraceConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }, "1").warning).toContain("is not an http(s) URL");
});

const sample = (over: Partial<Span> = {}): Span => ({
  traceId: TRACE,
  spanId: "b7ad6b7169203331",
  parentSpanId: PARENT,
  remoteParent: true,
  traceState: "v=1",
  name: "invoke_agent scout",
  kind: "client",
  startMs: 1765000000123.456,
  endMs: 1765000001623.706,
  attributes: { s: "é🙂", i: 1234, zero: 0, neg: -5, d: 0.0125, b: false, list: ["stop", "length"], gone: undefined },
  events: [{ name: "retry", timeMs: 1765000000133.5, attributes: { attempt: 2 } }],
  status: { code: "error", message: "boom" },
  flags: 1,
  ...over,
});

test("OTLP protobuf and JSON carry the same spans: ids, times to the microsecond, every attribute type", () => {
  const src = { resource: { "service.name": "subagents" }, scope: { name: "subagents", version: "9.9.9" } };
  const spans = [sample(), sample({ spanId: "1111111111111111", parentSpanId: undefined, remoteParent: undefined })];
  const pb = decodeTraces(encodeProtobuf(spans, src), "application/x-protobuf");
  const js = decodeTraces(new TextEncoder().encode(encodeJson(spans, src)), "application/json");
  const plain = (list: ReceivedSpan[]) => list.map(({ encoding: _, ...s }) => s);
  expect(plain(pb)).toEqual(plain(js));
  const [s, root] = pb;
  expect(s).toMatchObject({
    traceId: TRACE,
    spanId: "b7ad6b7169203331",
    parentSpanId: PARENT,
    traceState: "v=1",
    // sampled, and the parent is known to be remote
    flags: 0x301,
    name: "invoke_agent scout",
    kind: 3,
    startNs: 1765000000123456000n,
    endNs: 1765000001623706000n,
    attributes: { s: "é🙂", i: 1234, zero: 0, neg: -5, d: 0.0125, b: false, list: ["stop", "length"] },
    events: [{ name: "retry", timeNs: 1765000000133500000n, attributes: { attempt: 2 } }],
    status: { code: 2, message: "boom" },
    resource: { "service.name": "subagents" },
    scope: { name: "subagents", version: "9.9.9" },
  });
  expect("gone" in s.attributes).toBe(false);
  expect(root.parentSpanId).toBeUndefined();
  expect(root.flags).toBe(0x101);
});

/** A tracing that keeps what it is given, on a clock the test moves. */
function keep(parent?: Tracing["parent"], content = false) {
  const spans: Span[] = [];
  let now = 1_000_000;
  const tracing: Tracing = {
    ...(parent ? { parent } : {}),
    content,
    now: () => now,
    export: (s) => spans.push(...s),
    flush: async () => {},
  };
  return { tracing, spans, tick: (ms: number) => (now += ms) };
}

const task = (name: string, extra: Partial<ResolvedTask> = {}): ResolvedTask =>
  resolvedTask({
    name,
    prompt: `do ${name} with sk-ant-api03-abcdefghijklmnopqrstuv`,
    cwd: "/w",
    sessionId: `${name}-session`,
    timeoutSec: 60,
    ...extra,
  });

const asReceived = (spans: Span[]) =>
  decodeTraces(
    encodeProtobuf(spans, { resource: {}, scope: { name: "subagents", version: "0" } }),
    "application/x-protobuf",
  );

test("a call's spans: workflow → agents → queue, stages, chats, tools, gate; usage, errors, events, child context", () => {
  const { tracing, spans, tick } = keep({ traceId: TRACE, spanId: PARENT, flags: 1, state: "v=1" });
  const tasks = [task("good", { agent: "scout", model: "fake-model" }), task("bad")];
  const trace = new CallTrace(tracing, tasks, { workflow: "review" });
  const ev = (e: CallEvent) => trace.event(e);
  const usage = { input: 100, output: 20, cacheRead: 50, cacheWrite: 5, cost: 0.01 };
  ev({ type: "taskStart", index: 0, task: tasks[0] });
  const child0 = trace.childContext(0);
  trace.placed(0, { runner: "local", sandbox: true, runtime: "pi", isolation: "worktree" });
  const setupDone = trace.stageTimer(0)("setup");
  tick(30);
  setupDone();
  trace.stageTimer(0)("child")(); // the child is told by its events: its start, until it reports its session
  const progress = (index: number, event: Extract<CallEvent, { type: "taskProgress" }>["event"]) =>
    ev({ type: "taskProgress", index, state: undefined as never, event });
  progress(0, { type: "session", id: "s" });
  progress(0, { type: "turn_start" });
  tick(100);
  progress(0, {
    type: "assistant",
    text: "",
    toolCalls: [{ id: "t1", name: "bash", args: '{"command":"ls"}' }],
    usage,
    model: "fake-model",
    provider: "anthropic",
    stopReason: "toolUse",
  });
  progress(0, { type: "tool_start", id: "t1", name: "bash", args: '{"command":"ls"}' });
  tick(40);
  progress(0, { type: "tool_end", id: "t1", name: "bash", isError: false, result: "a\nb" });
  progress(0, { type: "retry", attempt: 1, maxAttempts: 3, delayMs: 10, errorMessage: "503 overloaded" });
  progress(0, { type: "turn_start" });
  tick(50);
  progress(0, { type: "assistant", text: "done", toolCalls: [], usage, model: "fake-model", provider: "anthropic" });
  progress(0, { type: "gate_start", attempt: 1, command: "npm test" });
  tick(20);
  progress(0, { type: "gate", attempt: 1, passed: true, exitCode: 0, timedOut: false, output: "" });
  const good: TaskOutcome = {
    sessionId: "good-session",
    name: "good",
    agent: "scout",
    result: runResult({
      status: "completed",
      output: "all done",
      model: "fake-model",
      usage: { input: 200, output: 40, cacheRead: 100, cacheWrite: 10, cost: 0.02, turns: 2 },
      toolCount: 1,
      gate: { passed: true, attempts: 1 },
    }),
  };
  ev({ type: "taskEnd", index: 0, outcome: good });
  // The second task waited for the first one's slot; its child dies with a tool still open.
  ev({ type: "taskStart", index: 1, task: tasks[1] });
  progress(1, { type: "turn_start" });
  tick(10);
  progress(1, {
    type: "assistant",
    text: "",
    toolCalls: [],
    usage: { input: 1, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 },
    model: "fake-model",
    provider: "google",
    stopReason: "error",
    errorMessage: "400 scripted refusal\nsecond line",
  });
  progress(1, { type: "tool_start", id: "t9", name: "read", args: "{}" });
  tick(10);
  const bad: TaskOutcome = {
    sessionId: "bad-session",
    name: "bad",
    agent: "default",
    result: runResult({ status: "error", error: "scripted refusal", errorCode: "SUBAGENT_FAILED" }),
  };
  ev({ type: "taskEnd", index: 1, outcome: bad });
  trace.end();

  const got = asReceived(spans);
  expect(new Set(got.map((s) => s.traceId))).toEqual(new Set([TRACE]));
  const root = got.find((s) => s.name === "invoke_workflow review")!;
  expect(root.parentSpanId).toBe(PARENT);
  expect(root.flags).toBe(0x301);
  expect(root.traceState).toBe("v=1");
  expect(spanTree(got, root)).toBe(
    [
      "invoke_workflow review",
      "  invoke_agent scout",
      "    setup",
      "    start",
      "    chat fake-model",
      "    execute_tool bash",
      "    chat fake-model",
      "    gate",
      "  invoke_agent default",
      "    queue",
      "    chat fake-model",
      "    execute_tool read",
    ].join("\n"),
  );
  const agent = got.find((s) => s.name === "invoke_agent scout")!;
  expect(child0).toEqual({ traceId: TRACE, spanId: agent.spanId, flags: 1, state: "v=1" });
  expect(agent.attributes).toMatchObject({
    "gen_ai.operation.name": "invoke_agent",
    "gen_ai.agent.name": "scout",
    "gen_ai.conversation.id": "good-session",
    "gen_ai.provider.name": "anthropic",
    "gen_ai.request.model": "fake-model",
    "gen_ai.usage.input_tokens": 310,
    "gen_ai.usage.output_tokens": 40,
    "gen_ai.usage.cache_read.input_tokens": 100,
    "gen_ai.usage.cache_creation.input_tokens": 10,
    "subagents.usage.cost": 0.02,
    "subagents.task.name": "good",
    "subagents.runner": "local",
    "subagents.sandbox": true,
    "subagents.isolation": "worktree",
    "subagents.gate.passed": true,
  });
  expect(agent.status.code).toBe(0);
  expect(agent.events.map((e) => e.name)).toEqual(["retry"]);
  expect(agent.events[0].attributes["subagents.retry.error"]).toBe("503 overloaded");
  // No content unless asked for.
  expect(JSON.stringify(spans)).not.toContain("sk-ant");
  expect("gen_ai.input.messages" in agent.attributes).toBe(false);
  const [chat1] = got.filter((s) => s.name === "chat fake-model");
  expect(chat1.kind).toBe(3);
  expect(Number(chat1.endNs - chat1.startNs) / 1e6).toBe(100);
  expect(chat1.attributes).toMatchObject({
    "gen_ai.operation.name": "chat",
    // pi's toolUse as the conventions name it.
    "gen_ai.response.finish_reasons": ["tool_call"],
    "gen_ai.usage.input_tokens": 155,
  });
  const tool = got.find((s) => s.name === "execute_tool bash")!;
  expect(tool.attributes).toMatchObject({ "gen_ai.tool.name": "bash", "gen_ai.tool.call.id": "t1" });
  expect(Number(tool.endNs - tool.startNs) / 1e6).toBe(40);
  const failed = got.find((s) => s.name === "invoke_agent default")!;
  expect(failed.status).toEqual({ code: 2, message: "scripted refusal" });
  expect(failed.attributes["error.type"]).toBe("SUBAGENT_FAILED");
  const badChat = got.filter((s) => s.parentSpanId === failed.spanId && s.name.startsWith("chat"))[0];
  expect(badChat.status).toEqual({ code: 2, message: "400 scripted refusal" });
  expect(badChat.attributes["gen_ai.provider.name"]).toBe("gcp.gemini");
  expect(got.find((s) => s.name === "execute_tool read")?.status.code).toBe(2);
  expect(root.status).toEqual({ code: 2, message: "1 of 2 tasks failed" });
  expect(root.attributes).toMatchObject({ "subagents.tasks": 2, "subagents.usage.cost": 0.02 });
});

test("content capture: prompt, output and tool arguments go on spans, masked, only when asked for", () => {
  const { tracing, spans } = keep(undefined, true);
  const t = task("c");
  const trace = new CallTrace(tracing, [t], { tool: { name: "delegate_to_subagents", callId: "call_1" } });
  trace.event({ type: "taskStart", index: 0, task: t });
  const progress = (event: Extract<CallEvent, { type: "taskProgress" }>["event"]) =>
    trace.event({ type: "taskProgress", index: 0, state: undefined as never, event });
  progress({
    type: "tool_start",
    id: "x",
    name: "bash",
    args: '{"command":"echo ghp_abcdefghijklmnopqrstuvwxyz0123456789"}',
  });
  progress({ type: "tool_end", id: "x", name: "bash", isError: false, result: "ok" });
  const outcome: TaskOutcome = {
    sessionId: "c-session",
    name: "c",
    agent: "default",
    result: runResult({ status: "completed", output: "the answer" }),
  };
  trace.event({ type: "taskEnd", index: 0, outcome });
  trace.end();
  const got = asReceived(spans);
  // A trace of our own, under the parent agent's tool call.
  const tool = got.find((s) => s.name === "execute_tool delegate_to_subagents")!;
  expect(tool.parentSpanId).toBeUndefined();
  expect(tool.attributes["gen_ai.tool.call.id"]).toBe("call_1");
  expect(got.find((s) => s.name === "invoke_workflow")?.parentSpanId).toBe(tool.spanId);
  const agent = got.find((s) => s.name === "invoke_agent default")!;
  const input = JSON.parse(String(agent.attributes["gen_ai.input.messages"]));
  expect(input[0].parts[0].content).toBe("do c with sk-ant-[REDACTED]");
  expect(JSON.parse(String(agent.attributes["gen_ai.output.messages"]))[0].parts[0].content).toBe("the answer");
  const bash = got.find((s) => s.name === "execute_tool bash")!;
  expect(bash.attributes["gen_ai.tool.call.arguments"]).toBe('{"command":"echo gh_[REDACTED]"}');
  expect(bash.attributes["gen_ai.tool.call.result"]).toBe("ok");
});

test("a kept child makes each task's TRACEPARENT from its session, as the owner names the task's span", () => {
  const { tracing } = keep({ traceId: TRACE, spanId: PARENT, flags: 1 });
  const tasks = [task("first"), task("second")];
  const trace = new CallTrace(tracing, tasks);
  const [first, second] = [0, 1].map((i) => formatTraceparent(trace.childContext(i)));
  // The process started with the first task's; the second task's session gives it the second's.
  const file = childSessionFile("/agent", "/w", "default", tasks[1].sessionId);
  expect(sessionIdOfFile(file)).toBe(tasks[1].sessionId);
  expect(sessionTraceparent(first, sessionIdOfFile(file))).toBe(second);
  expect(trace.childContext(1).spanId).toBe(taskSpanId(TRACE, tasks[1].sessionId));
  expect(taskSpanId(TRACE, "a")).not.toBe(taskSpanId(TRACE, "b"));
  expect(sessionTraceparent("garbage", "x")).toBeNull();
});

test("a parent that was not sampled (flags 00): nothing is recorded, and each child is handed the same decision", () => {
  const { tracing, spans } = keep({ traceId: TRACE, spanId: PARENT, flags: 0 });
  const tasks = [task("t")];
  const trace = new CallTrace(tracing, tasks, { tool: { name: "delegate_to_subagents", callId: "c1" } });
  trace.event({ type: "taskStart", index: 0, task: tasks[0] });
  expect(traceEnv(trace.childContext(0)).TRACEPARENT).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
  trace.event({ type: "taskProgress", index: 0, state: undefined as never, event: { type: "turn_start" } });
  const result = runResult({ status: "completed" });
  trace.event({ type: "taskEnd", index: 0, outcome: { sessionId: "s", name: "t", agent: "a", result } });
  trace.end();
  expect(spans).toEqual([]);
});

test("a streamed call (a batch's items): one trace, each task's span from when it was taken, totals at the end", () => {
  const { tracing, spans, tick } = keep();
  const running = new Map<number, ResolvedTask>();
  const trace = new CallTrace(tracing, (i) => running.get(i));
  for (const i of [0, 1]) {
    running.set(i, task(`item-${i}`));
    tick(100);
    trace.event({ type: "taskStart", index: i, task: running.get(i) as ResolvedTask });
    tick(10);
    const result = runResult({
      status: i ? "error" : "completed",
      usage: { input: 10, output: 2, cacheRead: 0, cacheWrite: 0, cost: 0.5, turns: 1 },
    });
    trace.event({ type: "taskEnd", index: i, outcome: { sessionId: `s${i}`, name: `item-${i}`, agent: "a", result } });
    running.delete(i);
  }
  trace.end();
  const got = asReceived(spans);
  const root = got.find((s) => s.name === "invoke_workflow")!;
  expect(root.parentSpanId).toBeUndefined();
  expect(spanTree(got, root)).toBe(["invoke_workflow", "  invoke_agent a", "  invoke_agent a"].join("\n"));
  expect(root.attributes).toMatchObject({
    "subagents.tasks": 2,
    "subagents.tasks.failed": 1,
    "subagents.usage.cost": 1,
  });
  // No queue span: a streamed task is taken when a slot is free; its span starts then.
  for (const a of got.filter((s) => s.name === "invoke_agent a")) expect(Number(a.endNs - a.startNs) / 1e6).toBe(10);
});
