// Composition's pure parts: the hand-off graph check, the fork cleaner, the schema check, a gate's failure.
import { expect, test } from "bun:test";
import { dagProblem } from "../../../../src/core/task-graph.ts";
import { DagQueue, fillPrompt } from "../../../../src/core/run/dag.ts";
import { forkBranch, type ForkEntry } from "../../../../src/core/run/fork.ts";
import { outputSchemaProblem } from "../../../../src/core/output-schema.ts";
import { gateFailure } from "../../../../src/core/run/process/gate.ts";

test("graph check: a longer cycle is named in order; {{word}} of no task is left alone; no after = no checks", () => {
  const t = (name: string, after?: string[], prompt = "p") => ({ name, prompt, ...(after ? { after } : {}) });
  expect(dagProblem([t("a", ["c"]), t("b", ["a"]), t("c", ["b"])])).toBe(
    "tasks wait for each other in a cycle: a → c → b → a",
  );
  expect(dagProblem([t("a"), t("b", ["a"], "{{a}} and {{ vue }}")])).toBeNull();
  expect(dagProblem([t("x"), t("x")])).toBeNull();
  expect(fillPrompt("{{a}}/{{ a }}/{{b}}", ["a"], new Map([["a", "A"]]))).toBe("A/A/{{b}}");
});

test("queue: a diamond runs the join last, and a failure skips only what depends on it", () => {
  const q = new DagQueue([
    { name: "a", prompt: "" },
    { name: "b", prompt: "", after: ["a"] },
    { name: "c", prompt: "", after: ["a"] },
    { name: "d", prompt: "{{b}}", after: ["b", "c"] },
    { name: "e", prompt: "" },
  ]);
  expect(q.take()).toEqual({ index: 0 });
  expect(q.take()).toEqual({ index: 4 });
  expect(q.take()).toBe("wait");
  q.finish(0, { status: "completed", output: "A" }, "s");
  expect(q.take()).toEqual({ index: 1 });
  expect(q.take()).toEqual({ index: 2 });
  q.finish(1, { status: "completed", output: "B" }, "s");
  q.finish(2, { status: "error", output: "" }, "s");
  expect(q.take()).toEqual({ index: 3, skipBecause: 'skipped: "c" did not complete' });
  q.finish(4, { status: "completed", output: "" }, "s");
  expect(q.take()).toBe("done");
});

test("fork: our mirror entries and unanswered calls are dropped, answered delegations kept; entries are re-linked", () => {
  const msg = (id: string, message: Record<string, unknown>): ForkEntry => ({
    type: "message",
    id,
    parentId: null,
    message,
  });
  const branch: ForkEntry[] = [
    msg("1", { role: "user", content: [{ type: "text", text: "hi" }] }),
    msg("2", {
      role: "assistant",
      content: [
        { type: "toolCall", id: "c1", name: "bash" },
        { type: "toolCall", id: "c2", name: "delegate_to_subagents" },
      ],
      stopReason: "toolUse",
    }),
    msg("3", { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [] }),
    msg("4", { role: "toolResult", toolCallId: "c2", toolName: "delegate_to_subagents", content: [] }),
    { type: "custom", id: "5", parentId: null, customType: "pi-subagents", data: {} },
    msg("6", {
      role: "assistant",
      content: [
        { type: "text", text: "let me delegate" },
        { type: "toolCall", id: "c3", name: "delegate_to_subagents" },
        { type: "toolCall", id: "c4", name: "read" },
      ],
      stopReason: "toolUse",
    }),
  ];
  const out = forkBranch(branch);
  expect(out.map((e) => e.id)).toEqual(["1", "2", "3", "4", "6"]);
  expect(out.map((e) => e.parentId)).toEqual([null, "1", "2", "3", "4"]);
  // An earlier, answered delegation stays as the parent saw it (the copy must repeat the parent's prefix).
  expect((out[1].message as { content: { name: string }[] }).content.map((p) => p.name)).toEqual([
    "bash",
    "delegate_to_subagents",
  ]);
  // The delegating turn keeps its words, loses every call without a result, and reads as finished.
  expect(out[4].message).toMatchObject({ content: [{ type: "text", text: "let me delegate" }], stopReason: "stop" });
  expect(forkBranch([])).toEqual([]);
});

test("schema check names the place; gates say why they failed", () => {
  expect(outputSchemaProblem("s", { type: "object", properties: { a: { type: "strin" } } })).toBe(
    's.properties.a.type must be one of object, array, string, number, integer, boolean, null (got "strin")',
  );
  expect(outputSchemaProblem("s", [])).toBe("s must be a JSON Schema object (got array)");
  expect(outputSchemaProblem("s", { anyOf: [{ type: "string" }, { type: "null" }] })).toBeNull();
  const g = { command: "make test", timeoutSec: 9, retries: 0 };
  expect(gateFailure(g, undefined)).toContain("did not run");
  expect(gateFailure(g, { attempts: 1, passed: false, running: false, lastExit: 2, lastOutput: "x\nFAIL y" })).toBe(
    "Acceptance check failed after 1 attempt: `make test` exited with code 2\nx\nFAIL y",
  );
  expect(gateFailure(g, { attempts: 1, passed: true, running: false })).toBeNull();
});
