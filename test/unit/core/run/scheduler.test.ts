// Scheduler: input order, the concurrency bound, queued tasks, abort fan-out. Tasks are fake runners whose
// completion the test controls, so every interleaving asserted here is deterministic.
import { expect, test } from "bun:test";
import { runScheduled, type TaskRunner } from "../../../../src/core/run/scheduler.ts";
import { failedResult } from "../../../../src/core/run/task-error.ts";
import type { ResolvedTask, TaskOutcome, TaskWiring } from "../../../../src/core/run/task-types.ts";
import { emptyUsage } from "../../../../src/core/types.ts";
import { taskWhy } from "../../../support/pi-env.ts";
import { resolvedTask } from "../../../support/resolved-task.ts";

type Pending = {
  input: ResolvedTask;
  signal: AbortSignal;
  notRun?: TaskWiring["notRun"];
  resolve: (o: TaskOutcome) => void;
};

function controllableRunner() {
  const pending: Pending[] = [];
  const started: string[] = [];
  let running = 0;
  let maxRunning = 0;
  const run: TaskRunner = (input, hooks) =>
    new Promise<TaskOutcome>((resolve) => {
      started.push(input.name);
      running++;
      maxRunning = Math.max(maxRunning, running);
      const entry: Pending = {
        input,
        signal: hooks.signal,
        notRun: hooks.notRun,
        resolve: (o) => {
          running--;
          resolve(o);
        },
      };
      if (hooks.signal.aborted) {
        entry.resolve(outcome(input, "error", "cancelled"));
        return;
      }
      hooks.signal.addEventListener("abort", () => entry.resolve(outcome(input, "error", "cancelled")), { once: true });
      pending.push(entry);
    });
  return { run, pending, started, maxRunning: () => maxRunning };
}

function outcome(input: ResolvedTask, status: "completed" | "error", output: string): TaskOutcome {
  const result =
    status === "completed"
      ? {
          ...failedResult("", "SUBAGENT_FAILED"),
          status,
          output,
          error: undefined,
          errorCode: undefined,
          usage: emptyUsage(),
        }
      : { ...failedResult(output, "SUBAGENT_CANCELLED"), output: "" };
  return { sessionId: input.sessionId, name: input.name, agent: "default", result };
}

const tasks = (n: number): ResolvedTask[] =>
  Array.from({ length: n }, (_, i) => prepared({ name: `t${i}`, prompt: `p${i}`, sessionId: `id${i}` }));
/** A task as the call module prepares it (core/call/prepare.ts). */
const prepared = (t: Pick<ResolvedTask, "name" | "prompt" | "sessionId"> & Partial<ResolvedTask>) => resolvedTask(t);
const tick = () => new Promise((r) => setTimeout(r, 0));

test("never runs more than `concurrency` tasks, and returns outcomes in input order", async () => {
  const r = controllableRunner();
  const done = runScheduled(tasks(8), 3, r.run);
  await tick();
  expect(r.started).toEqual(["t0", "t1", "t2"]);
  // Finish in reverse-ish order to prove the result order is the input order, not completion order.
  const order = [2, 0, 1, 5, 3, 4, 7, 6];
  for (const want of order) {
    for (let spins = 0; spins < 20 && !r.pending.some((p) => p.input.name === `t${want}`); spins++) await tick();
    const p = r.pending.find((x) => x.input.name === `t${want}`)!;
    expect(p).toBeDefined();
    p.resolve(outcome(p.input, "completed", `out-${want}`));
    await tick();
  }
  const outcomes = await done;
  expect(outcomes.map((o) => o.result.output)).toEqual(tasks(8).map((t) => `out-${t.name.slice(1)}`));
  expect(r.maxRunning()).toBe(3);
});

test("an abort stops running tasks and cancels queued ones without losing any outcome", async () => {
  const r = controllableRunner();
  const controller = new AbortController();
  const ends: number[] = [];
  const done = runScheduled(tasks(6), 2, r.run, { signal: controller.signal, onTaskEnd: (i) => ends.push(i) });
  await tick();
  expect(r.started).toEqual(["t0", "t1"]);
  r.pending[0].resolve(outcome(r.pending[0].input, "completed", "first"));
  await tick();
  controller.abort();
  const outcomes = await done;
  expect(outcomes).toHaveLength(6);
  expect(outcomes[0].result.status, taskWhy(outcomes[0].result)).toBe("completed");
  for (const o of outcomes.slice(1)) expect(o.result.status).toBe("error");
  // Queued tasks were handed an already-aborted signal (so they record a cancellation and start nothing).
  expect(ends.sort()).toEqual([0, 1, 2, 3, 4, 5]);
});

test("a runner that throws does not take the other tasks down", async () => {
  const run: TaskRunner = async (input) => {
    if (input.name === "t1") throw new Error("boom");
    return outcome(input, "completed", input.name);
  };
  const outcomes = await runScheduled(tasks(3), 2, run);
  expect(outcomes.map((o) => o.result.status)).toEqual(["completed", "error", "completed"]);
  expect(outcomes[1].result.error).toContain("boom");
});

test("after: a dependency later in the list runs first even at concurrency 1; independents do not wait", async () => {
  const r = controllableRunner();
  const input: ResolvedTask[] = [
    prepared({ name: "b", prompt: "use {{a}}", sessionId: "ib", after: ["a"] }),
    prepared({ name: "a", prompt: "pa", sessionId: "ia" }),
    prepared({ name: "c", prompt: "pc", sessionId: "ic" }),
  ];
  const done = runScheduled(input, 1, r.run);
  await tick();
  expect(r.started).toEqual(["a"]);
  r.pending.shift()!.resolve(outcome(input[1], "completed", "A-OUT"));
  for (let s = 0; s < 20 && r.started.length < 2; s++) await tick();
  // b is ready now and comes first in input order; it gets a's output.
  expect(r.started).toEqual(["a", "b"]);
  expect(r.pending[0].input.prompt).toBe("use A-OUT");
  r.pending.shift()!.resolve(outcome(input[0], "completed", "B-OUT"));
  for (let s = 0; s < 20 && r.started.length < 3; s++) await tick();
  r.pending.shift()!.resolve(outcome(input[2], "completed", "C-OUT"));
  expect((await done).map((o) => o.result.output)).toEqual(["B-OUT", "A-OUT", "C-OUT"]);
});

test("after: a failed dependency skips its dependents (passed to the runner as not run, not started)", async () => {
  const r = controllableRunner();
  const started: number[] = [];
  const input: ResolvedTask[] = [
    prepared({ name: "a", prompt: "pa", sessionId: "ia" }),
    prepared({ name: "b", prompt: "pb", sessionId: "ib", after: ["a"] }),
  ];
  const done = runScheduled(input, 2, r.run, { onTaskStart: (i) => started.push(i) });
  await tick();
  r.pending.shift()!.resolve(outcome(input[0], "error", "boom"));
  for (let s = 0; s < 20 && r.started.length < 2; s++) await tick();
  expect(r.pending[0].notRun).toEqual({ code: "SKIPPED", message: 'skipped: "a" did not complete' });
  r.pending.shift()!.resolve(outcome(input[1], "error", "skipped"));
  await done;
  expect(started).toEqual([0]);
});
