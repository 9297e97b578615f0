// The --json summary a script reads last (cli/terminal/report.ts): each task's spend and wall time, and the call's
// spend in all — the figures its trace's spans carry.
import { expect, test } from "bun:test";
import { summaryEvent } from "../../../src/cli/terminal/report.ts";
import { runResult } from "../../../src/core/types.ts";

test("the summary: every task's usage and durationMs, and the call's usage added up", () => {
  const usage = (input: number, cost: number) => ({ input, output: 2, cacheRead: 5, cacheWrite: 1, cost, turns: 1 });
  const outcome = (name: string, input: number, cost: number, durationMs: number) => ({
    name,
    sessionId: `${name}-s`,
    agent: "a",
    result: runResult({ status: "completed", usage: usage(input, cost), durationMs }),
  });
  const summary = summaryEvent([outcome("one", 10, 0.25, 1200), outcome("two", 30, 0.5, 800)]) as Record<string, any>;
  expect(summary.tasks.map((t: Record<string, unknown>) => t.durationMs)).toEqual([1200, 800]);
  expect(summary.usage).toEqual({ input: 40, output: 4, cacheRead: 10, cacheWrite: 2, cost: 0.75, turns: 2 });
});
