// A call's results as every front returns them (core/call/results.ts, core/run/outcome-text.ts): the structured
// result is bounded like the text (50 KB in all) with every task's status, error and session id first, outputs cut
// to their share with where the rest is, and the text and the structure say the same.
import { expect, test } from "bun:test";
import { STRUCTURED_BYTES, structuredTasks } from "../../../../src/core/call/results.ts";
import { delegateResultText } from "../../../../src/core/run/outcome-text.ts";
import type { TaskOutcome } from "../../../../src/core/run/task-types.ts";
import { shareBytes, utf8Length } from "../../../../src/core/truncate.ts";
import { runResult } from "../../../../src/core/types.ts";

const outcome = (name: string, output: string, fields: Partial<TaskOutcome["result"]> = {}): TaskOutcome => ({
  sessionId: `${name}${"0".repeat(16 - name.length)}`,
  name,
  agent: "default",
  result: runResult({ status: "completed", output, ...fields }),
});

const big = (tag: string, kb: number) =>
  `${tag}-head\n${`${tag} line with "quotes"\n`.repeat((kb * 1024) / 24)}${tag}-tail`;

test("3 × 60 KB: the structured result is at most 50 KB of JSON, its summary first names every task's status, error and session id, and each output keeps its head and tail with where the rest is", () => {
  const outcomes = [
    outcome("alpha", big("A", 60)),
    outcome("beta", big("B", 60), { status: "error", error: "exit 1: it broke", errorCode: "SUBAGENT_FAILED" }),
    outcome("gamma", big("G", 60)),
  ];
  const s = structuredTasks(outcomes);
  const json = JSON.stringify(s);
  expect(utf8Length(json)).toBeLessThanOrEqual(STRUCTURED_BYTES);
  // What a client that keeps only the first 6,000 characters still has: every task's status, error and id.
  const head = json.slice(0, 6000);
  for (const o of outcomes) expect(head).toContain(o.sessionId);
  expect(head).toContain("✗ beta: error — exit 1: it broke");
  expect(Object.keys(s)[0]).toBe("summary");
  expect(Object.keys(s.tasks[0]).at(-1)).toBe("output");
  for (const [i, t] of s.tasks.entries()) {
    const tag = ["A", "B", "G"][i];
    expect(t.output).toStartWith(`${tag}-head`);
    expect(t.output).toEndWith(`${tag}-tail`);
    expect(t.output).toContain(`get_subagent_output with sessionId "${t.sessionId}" returns the full text`);
  }
  // The text says the same: the status lines first, then each output cut the same way.
  const text = delegateResultText(outcomes);
  expect(text.startsWith(s.summary!)).toBe(true);
});

test("short outputs are whole; their room goes to the long one", () => {
  const outcomes = [outcome("a", "short a"), outcome("b", big("B", 80)), outcome("c", "short c")];
  const s = structuredTasks(outcomes);
  expect(s.tasks[0].output).toBe("short a");
  expect(s.tasks[2].output).toBe("short c");
  expect(utf8Length(s.tasks[1].output)).toBeGreaterThan(40 * 1024);
  expect(utf8Length(JSON.stringify(s))).toBeLessThanOrEqual(STRUCTURED_BYTES);
});

test("a structured result (data) too big to leave the outputs room is left out, saying so; long errors are cut", () => {
  const data = { rows: Array.from({ length: 5000 }, (_, i) => ({ i, text: "row of data" })) };
  const outcomes = [
    outcome("a", "out a", { structured: data }),
    outcome("b", "out b", { status: "error", error: `E${"x".repeat(100_000)}` }),
  ];
  const s = structuredTasks(outcomes);
  expect(s.tasks[0].data).toBeUndefined();
  expect(s.tasks[0].warnings?.at(-1)).toMatch(/^data \(\d+ KB\) left out of this result: too big$/);
  expect(utf8Length(s.tasks[1].error!)).toBeLessThan(3000);
  expect(utf8Length(JSON.stringify(s))).toBeLessThanOrEqual(STRUCTURED_BYTES);
  // A small one stays.
  expect(structuredTasks([outcome("c", "x", { structured: { ok: true } })]).tasks[0].data).toEqual({ ok: true });
});

test("shareBytes: even shares, a short text's room to the long ones, never under the least", () => {
  expect(shareBytes([10, 1000, 1000], 1000)).toEqual([10, 495, 495]);
  expect(shareBytes([5000, 5000], 1000, 2048)).toEqual([2048, 2048]);
  expect(shareBytes([], 1000)).toEqual([]);
});

test("16 tasks with long errors: the summary of every status line stays within a 2 KB preview, each keeping its name and session id", () => {
  const outcomes = Array.from({ length: 16 }, (_, i) =>
    outcome(`task${i}`, "", {
      status: "error",
      error: `failed: ${"detail ".repeat(200)}`,
      errorCode: "SUBAGENT_FAILED",
    }),
  );
  const { summary } = structuredTasks(outcomes);
  expect(utf8Length(JSON.stringify({ summary }))).toBeLessThan(2048);
  for (const o of outcomes) expect(summary).toContain(`✗ ${o.name}: error`);
  for (const o of outcomes) expect(summary).toContain(`${o.sessionId})`);
});
