// What a long answer keeps (core/run/process/transport.ts): the child fits every event in one line (cutText), and a
// line pi's JSON mode cut at the limit still gives the answer's head (JsonModeParser). The runner's side is in
// runner.test.ts (fake-pi children).
import { expect, test } from "bun:test";
import {
  cutText,
  fitAssistant,
  fitFinalize,
  JsonModeParser,
  MAX_EVENT_LINE,
  OUTPUT_CHARS,
} from "../../../../src/core/run/process/transport.ts";
import { LineSplitter } from "../../../../src/core/run/process/line-splitter.ts";

test("cutText: what fits stays whole; a longer text keeps its first OUTPUT_CHARS", () => {
  expect(cutText("short")).toBeNull();
  expect(cutText("a".repeat(OUTPUT_CHARS))).toBeNull();
  expect(cutText("a".repeat(OUTPUT_CHARS + 1))).toBe("a".repeat(OUTPUT_CHARS));
});

test("cutText: text that JSON-encodes six times its length (control characters) still fits one event line", () => {
  const head = cutText("\u0001".repeat(OUTPUT_CHARS))!;
  expect(head).not.toBeNull();
  expect(head.length).toBeGreaterThan(OUTPUT_CHARS / 3);
  expect(JSON.stringify({ type: "assistant", text: head }).length).toBeLessThan(MAX_EVENT_LINE);
});

test("fitAssistant and fitFinalize say how long the whole text was", () => {
  const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, cost: 0 };
  const long = "b".repeat(OUTPUT_CHARS + 10);
  const a = fitAssistant({ type: "assistant", text: long, toolCalls: [], usage });
  expect(a).toMatchObject({ cut: { of: OUTPUT_CHARS + 10 } });
  expect((a as { text: string }).text.length).toBe(OUTPUT_CHARS);
  expect(fitAssistant({ type: "assistant", text: "ok", toolCalls: [], usage })).not.toHaveProperty("cut");
  const f = fitFinalize({ status: "SUCCESS", result: long });
  expect(f).toMatchObject({ type: "finalize", cut: { of: OUTPUT_CHARS + 10 }, payload: { status: "SUCCESS" } });
});

test("pi's JSON mode: a message_end line over the line limit still gives the answer's head, marked cut", () => {
  const text = `${"c".repeat(17 * 1024 * 1024)}`;
  const line = `${JSON.stringify({ type: "message_end", message: { role: "assistant", content: [{ type: "text", text }], usage: { input: 3 } } })}\n`;
  const got: { line: string; cut: boolean }[] = [];
  const splitter = new LineSplitter((l, cut) => got.push({ line: l, cut }), MAX_EVENT_LINE);
  splitter.push(new TextEncoder().encode(line));
  splitter.end();
  expect(got).toHaveLength(1);
  expect(got[0].cut).toBe(true);
  const ev = new JsonModeParser().parse(got[0].line, true);
  expect(ev).toMatchObject({ type: "assistant", cut: {} });
  const salvaged = (ev as { text: string }).text;
  expect(salvaged.length).toBeGreaterThan(16_000_000);
  expect(/^c+$/.test(salvaged)).toBe(true);
});

test("pi's JSON mode: a cut inside an escape sequence is dropped, not misread; other cut lines say nothing", () => {
  const p = new JsonModeParser();
  const head = '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"ab\\u00';
  expect(p.parse(head, true)).toMatchObject({ type: "assistant", text: "ab" });
  const user = '{"type":"message_end","message":{"role":"user","content":[{"type":"text","text":"ab';
  expect(p.parse(user, true)).toBeNull();
  expect(p.parse('{"type":"tool_execution_end","result":"xx', true)).toBeNull();
  // A line kept short on purpose (jsonModeKeep: agent_end carries every message) is still known by its head.
  expect(p.parse('{"type":"agent_end","messages":[{"role":"user","content":"lo', true)).toEqual({ type: "agent_end" });
});
