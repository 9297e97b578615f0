// The few stderr lines a failed child's error keeps (unit/core/run/runner.test.ts checks it on a real crashing process).
import { expect, test } from "bun:test";
import { stderrSummary } from "../../../../src/core/run/process/stderr-summary.ts";

test("exception line first, provider messages, then the last lines; stack frames dropped; bounded", () => {
  const text = [
    "starting",
    "TypeError: cannot read properties of undefined (reading 'id')",
    "    at a (x.js:1:1)",
    "    at b (x.js:2:2)",
    "note 1",
    "note 2",
    "note 3",
    "note 4",
    "note 5",
    "bye",
  ].join("\n");
  expect(stderrSummary(text, text, true).split("\n")).toEqual([
    "TypeError: cannot read properties of undefined (reading 'id')",
    "…",
    "note 3",
    "note 4",
    "note 5",
    "bye",
  ]);
  expect(stderrSummary("", "", true)).toBe("");
  expect(stderrSummary("only line", "only line", true)).toBe("only line");
  const long = `Error: ${"y".repeat(5000)}\n`.repeat(20);
  expect(stderrSummary(long, long, true).length).toBeLessThanOrEqual(1500);
});

test("a provider's message is kept even when it is not the first error-looking line", () => {
  const head = "warning: slow disk\nfetch failed: 429 rate limit exceeded for model x\n";
  const tail = "    at z (y.js:1:1)\nexit\n";
  const s = stderrSummary(head, tail, false);
  expect(s).toContain("429 rate limit exceeded");
  expect(s.endsWith("exit")).toBe(true);
});
