// A call across the rounds of its tool call (src/mcp/calls.ts), on a stand-in run: a child's question ends a round
// as an elicitation and the retry's answer reaches the child; a question answered elsewhere ends a 2025 push round
// early; a client that never comes back has its call stopped; a cancelled request stops it at once.
import { expect, test } from "bun:test";
import type { AskAnswer, AskRequest } from "../../../src/core/run/process/ask.ts";
import { McpCalls } from "../../../src/mcp/calls.ts";
import type { ToolContext } from "../../../src/mcp/protocol/session.ts";
import { standInRun } from "./stand-in.ts";

const standIn = () => standInRun();

const ctx = (o: Partial<ToolContext> = {}): ToolContext => ({
  caps: { elicitation: true, roots: false, tasks: false },
  inputResponses: {},
  meta: {},
  signal: new AbortController().signal,
  notify: () => {},
  rootsUnreadable: () => {},
  ...o,
});

const question = (id: string, signal = new AbortController().signal): AskRequest => ({
  id,
  kind: "ask_parent",
  title: "Which design?",
  options: ["a", "b"],
  sessionId: "s1",
  label: "t",
  signal,
});

test("a question ends the round as an elicitation; the retry's answer reaches the child and the call goes on to its result", async () => {
  const calls = new McpCalls();
  const { run, end } = standIn();
  const { call, asker } = calls.open(() => ({ content: [{ type: "text", text: "done" }] }), 60_000);
  call.run = run;
  const answered = asker(question("q1"));
  const round = (await calls.attend(call, ctx())) as Record<string, any>;
  expect(round.resultType).toBe("input_required");
  expect(round.inputRequests.q1.params.message).toBe("Sub-agent t (session s1) asks: Which design? (a | b)");
  expect(round.inputRequests.q1.params.requestedSchema.properties.answer.enum).toEqual(["a", "b"]);
  const state = calls.codec.verify(round.requestState);
  const retry = ctx({ inputResponses: { q1: { action: "accept", content: { answer: "b" } } }, requestState: state });
  expect(calls.resumed(calls.stateOf(retry))).toBe(call);
  const result = calls.attend(call, retry);
  expect(await answered).toEqual({ value: "b" } satisfies AskAnswer);
  end();
  expect(await result).toEqual({ content: [{ type: "text", text: "done" }] });
  expect(calls.resumed(calls.stateOf(retry))).toBeUndefined();
});

test("a declined elicitation, or a retry without the answer, is 'dismissed' for the child", async () => {
  const calls = new McpCalls();
  const { run, end } = standIn();
  const { call, asker } = calls.open(() => ({ content: [] }), 60_000);
  call.run = run;
  const a1 = asker(question("q1"));
  const a2 = asker(question("q2"));
  const round = (await calls.attend(call, ctx())) as Record<string, any>;
  expect(Object.keys(round.inputRequests).sort()).toEqual(["q1", "q2"]);
  const done = calls.attend(call, ctx({ inputResponses: { q1: { action: "decline" } } }));
  expect(await a1).toEqual({ none: "dismissed" });
  expect(await a2).toEqual({ none: "dismissed" });
  end();
  await done;
});

test("a question answered elsewhere while the client is asked ends a 2025 push round (`until`)", async () => {
  const calls = new McpCalls();
  const { run, end } = standIn();
  const { call, asker } = calls.open(() => ({ content: [] }), 60_000);
  call.run = run;
  const closed = new AbortController();
  void asker(question("q1", closed.signal));
  const round = (await calls.attend(call, ctx())) as { until: Promise<unknown> };
  let over = false;
  void round.until.then(() => (over = true));
  closed.abort();
  await Bun.sleep(5);
  expect(over).toBe(true);
  end();
});

test("a client that never comes back: the parked call is stopped after askTimeout and the grace", async () => {
  const calls = new McpCalls(10);
  const { run, aborted } = standIn();
  const { call, asker } = calls.open(() => ({ content: [] }), 20);
  call.run = run;
  void asker(question("q1"));
  await calls.attend(call, ctx());
  await Bun.sleep(80);
  expect(String(aborted[0])).toContain("the MCP client did not come back");
});

test("a request cancelled while its question is out (a 2025 push round) stops the call", async () => {
  const calls = new McpCalls();
  const { run, aborted } = standIn();
  const { call, asker } = calls.open(() => ({ content: [] }), 60_000);
  call.run = run;
  void asker(question("q1"));
  const request = new AbortController();
  await calls.attend(call, ctx({ signal: request.signal }));
  request.abort("Stop");
  expect(aborted).toEqual(["Stop"]);
});
