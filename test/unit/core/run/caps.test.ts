// Session caps without a pi: settings (the lower of user and project wins), the refusal texts, duplicate tasks,
// and the guard that stops queued tasks once the cost cap is reached.
import { expect, test } from "bun:test";
import { defaultSettings, mergeSettings } from "../../../../src/core/settings.ts";
import { callRefusal, duplicateTasks, startRefusal } from "../../../../src/core/session-caps.ts";
import { CapGuard } from "../../../../src/core/run/cap-guard.ts";
import type { ResolvedTask, TaskOutcome } from "../../../../src/core/run/task-types.ts";
import { emptyUsage } from "../../../../src/core/types.ts";
import { Database } from "bun:sqlite";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore, Store } from "../../../../src/core/store/store.ts";
import { bunDbOpener } from "../../../../src/host/sqlite-bun.ts";
import { failedResult } from "../../../../src/core/run/task-error.ts";
import { resolvedTask } from "../../../support/resolved-task.ts";

test("caps: a project can lower a cap, never raise it; the user sets it", () => {
  const user = mergeSettings(
    defaultSettings(),
    { maxSpawnsPerSession: 300, maxSessionCost: 5, confirmAbove: 8 },
    "user",
    true,
  ).settings;
  expect(user.maxSpawnsPerSession).toBe(300);
  const raised = mergeSettings(
    user,
    { maxSpawnsPerSession: 1000, maxSessionCost: 50, confirmAbove: 20 },
    "project",
    false,
  );
  expect([raised.settings.maxSpawnsPerSession, raised.settings.maxSessionCost, raised.settings.confirmAbove]).toEqual([
    300, 5, 8,
  ]);
  // Ignored, and said so (doctor, the extension's notice): one warning per cap naming the file, value and cap kept.
  expect(raised.warnings).toEqual([
    "project: subagents.maxSpawnsPerSession = 1000 would raise the cap (300 from your own settings or the default); a project's settings can only lower it: ignored",
    "project: subagents.maxSessionCost = 50 would raise the cap (5 from your own settings or the default); a project's settings can only lower it: ignored",
    "project: subagents.confirmAbove = 20 would raise the cap (8 from your own settings or the default); a project's settings can only lower it: ignored",
  ]);
  const lowered = mergeSettings(
    user,
    { maxSpawnsPerSession: 10, maxSessionCost: 1.5, confirmAbove: 3 },
    "project",
    false,
  );
  expect([
    lowered.settings.maxSpawnsPerSession,
    lowered.settings.maxSessionCost,
    lowered.settings.confirmAbove,
  ]).toEqual([10, 1.5, 3]);
  expect(lowered.warnings).toEqual([]);
  // The same value as the user's is no raise: nothing to say.
  expect(mergeSettings(user, { maxSpawnsPerSession: 300 }, "project", false).warnings).toEqual([]);
  // Unset in the user's file: the default (100) is what a project can only lower; a cost cap it may set.
  const fromDefault = mergeSettings(
    defaultSettings(),
    { maxSpawnsPerSession: 500, maxSessionCost: 2 },
    "project",
    false,
  );
  expect([fromDefault.settings.maxSpawnsPerSession, fromDefault.settings.maxSessionCost]).toEqual([100, 2]);
  expect(fromDefault.warnings).toEqual([
    "project: subagents.maxSpawnsPerSession = 500 would raise the cap (100 from your own settings or the default); a project's settings can only lower it: ignored",
  ]);
  const bad = mergeSettings(defaultSettings(), { maxSpawnsPerSession: 2.5, maxSessionCost: "lots" }, "user", true);
  expect(bad.settings.maxSpawnsPerSession).toBe(100);
  expect(bad.warnings.join("\n")).toContain("subagents.maxSpawnsPerSession must be a whole number");
  expect(bad.warnings.join("\n")).toContain("subagents.maxSessionCost must be a number");
});

test("caps: a negative value is a warning and the cap stays (the default, or the user's own), never 0 refusing every call", () => {
  const neg = mergeSettings(
    defaultSettings(),
    { maxSpawnsPerSession: -1, maxSessionCost: -5, confirmAbove: -2 },
    "user",
    true,
  );
  expect(neg.settings.maxSpawnsPerSession).toBe(100);
  expect(neg.settings.maxSessionCost).toBeUndefined();
  expect(neg.settings.confirmAbove).toBeUndefined();
  expect(neg.warnings).toEqual([
    "user: subagents.maxSpawnsPerSession = -1 is negative; ignored (the cap stays 100)",
    "user: subagents.maxSessionCost = -5 is negative; ignored (no cap)",
    "user: subagents.confirmAbove = -2 is negative; ignored (no cap)",
  ]);
  const user = mergeSettings(defaultSettings(), { maxSpawnsPerSession: 7 }, "user", true).settings;
  const project = mergeSettings(user, { maxSpawnsPerSession: -1 }, "project", false);
  expect(project.settings.maxSpawnsPerSession).toBe(7);
  expect(project.warnings).toEqual([
    "project: subagents.maxSpawnsPerSession = -1 is negative; ignored (the cap stays 7)",
  ]);
  // 0 is a wish (no children at all), kept as written.
  expect(mergeSettings(defaultSettings(), { maxSpawnsPerSession: 0 }, "user", true).settings.maxSpawnsPerSession).toBe(
    0,
  );
});

test("caps: refusals name the setting, its value and what was used", () => {
  const caps = { ...defaultSettings(), maxSpawnsPerSession: 5, maxSessionCost: 2 };
  expect(callRefusal(caps, { spawns: 3, cost: 0 }, { tasks: 2 })).toBeNull();
  const spawn = callRefusal(caps, { spawns: 4, cost: 0 }, { tasks: 2 })!;
  expect(spawn.code).toBe("SPAWN_LIMIT");
  expect(spawn.message).toContain(
    "subagents.maxSpawnsPerSession is 5; this pi session has started 4 sub-agents, and this call asks for 2 more",
  );
  const spent = callRefusal(caps, { spawns: 0, cost: 2.5 }, { tasks: 1 })!;
  expect(spent).toEqual({
    code: "BUDGET_EXCEEDED",
    message: expect.stringContaining(
      "subagents.maxSessionCost is $2.00; this pi session's sub-agents have spent $2.50",
    ),
  });
  const call = callRefusal(caps, { spawns: 0, cost: 1.5 }, { tasks: 1, maxCost: 1 })!;
  expect(call.message).toContain(
    "this call's maxCost $1.00 is more than what is left of subagents.maxSessionCost $2.00 ($1.50 spent, $0.50 left)",
  );
  expect(callRefusal(caps, { spawns: 0, cost: 1.5 }, { tasks: 1, maxCost: 0.5 })).toBeNull();
  expect(startRefusal(caps, { spawns: 0, cost: 1.99 })).toBeNull();
  expect(startRefusal(caps, { spawns: 0, cost: 2 })?.code).toBe("BUDGET_EXCEEDED");
});

test("duplicates: same trimmed prompt, agent and cwd are refused naming both tasks; a different agent or cwd is not", () => {
  const t = (name: string, prompt: string, extra: Partial<ResolvedTask> = {}) => ({
    name,
    prompt,
    cwd: "/w",
    agent: "default",
    ...extra,
  });
  expect(duplicateTasks([t("a", "review x"), t("b", "review y"), t("c", "  review x\n")])).toContain(
    'task 1 ("a") and task 3 ("c")',
  );
  expect(duplicateTasks([t("a", "review x"), t("b", "review x", { agent: "scout" })])).toBeNull();
  expect(duplicateTasks([t("a", "review x"), t("b", "review x", { cwd: "/other" })])).toBeNull();
});

test("guard: once the session's spend reaches maxSessionCost, queued tasks are refused as they come up", async () => {
  const guard = new CapGuard(undefined, "this invocation");
  const caps = { ...defaultSettings(), maxSessionCost: 1 };
  expect(guard.admit(caps, { tasks: 3 })).toBeNull();
  expect(guard.status()).toEqual({ running: 0, queued: 3, cost: 0 });
  const started: string[] = [];
  const run = guard.runner(caps, async (input, hooks) => {
    const refusal = hooks.startRefusal?.();
    const outcome = (error?: string): TaskOutcome => ({
      sessionId: input.sessionId!,
      name: input.name,
      agent: "default",
      result: {
        status: error ? "error" : "completed",
        output: "",
        error,
        finalized: false,
        usage: emptyUsage(),
        exitCode: 0,
        toolCount: 0,
        messages: [],
        stderrTail: "",
        durationMs: 0,
      },
    });
    if (refusal) return outcome(refusal.message);
    started.push(input.name);
    hooks.onEvent?.({ usage: { ...emptyUsage(), cost: 0.6 } } as never, { type: "agent_end" });
    return outcome();
  });
  const names = ["one", "two", "three"];
  const outs = [];
  for (const name of names) outs.push(await run(resolvedTask({ name, prompt: name, sessionId: name }), {}));
  expect(started).toEqual(["one", "two"]);
  expect(outs[2].result.error).toContain(
    "subagents.maxSessionCost is $1.00; this invocation's sub-agents have spent $1.20: not started",
  );
  expect(guard.used()).toEqual({ spawns: 2, cost: 1.2 });
  expect(guard.status()).toEqual({ running: 0, queued: 0, cost: 1.2 });
});

for (const [kind, make] of [
  [
    "sqlite",
    () => new Store(bunDbOpener(Database)(join(mkdtempSync(join(tmpdir(), "caps-")), "s.db")), { isAlive: () => true }),
  ],
  ["memory", () => new MemoryStore({ isAlive: () => true })],
] as const) {
  test(`store (${kind}): a pi session's children — running ones count, runs refused before a child started do not, other sessions' neither`, () => {
    const store = make();
    const run = (parent: string, cost: number | null, refused?: "BUDGET_EXCEEDED" | "INVALID_INPUT") => {
      const id = store.newSessionId();
      store.createSession({ id, name: "t", agent: "default", cwd: "/", parentSession: parent });
      const runId = store.startRun(id, { prompt: "p", ownerPid: process.pid });
      if (refused) store.finishRun(runId, failedResult("not started", refused));
      else if (cost !== null)
        store.finishRun(runId, {
          ...failedResult("", "SUBAGENT_FAILED"),
          status: "completed",
          error: undefined,
          errorCode: undefined,
          exitCode: 0,
          usage: { ...emptyUsage(), cost, turns: 1 },
        });
    };
    run("pi-1", 0.25);
    run("pi-1", 0.5);
    run("pi-1", null); // still running
    run("pi-1", null, "BUDGET_EXCEEDED");
    run("pi-1", null, "INVALID_INPUT");
    run("pi-2", 9);
    expect(store.parentUsage("pi-1")).toEqual({ spawns: 3, cost: 0.75 });
    expect(store.parentUsage("nobody")).toEqual({ spawns: 0, cost: 0 });
  });
}
