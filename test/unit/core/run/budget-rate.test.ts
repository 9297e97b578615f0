// The pure parts of budgets and rate limits: reading budget fields, spend labels, the wrap-up-then-stop rule,
// and the call-wide rate gate (one hold and one halving for a burst of 429s, Retry-After honoured, slots held
// during a hold, concurrency raised again after successes, a bounded total wait).
import { expect, test } from "bun:test";
import { budgetHit, budgetLabel, budgetValue, CallSpend } from "../../../../src/core/budget.ts";
import { budgetWatch } from "../../../../src/core/run/process/budget-watch.ts";
import { RateGate } from "../../../../src/core/run/process/rate-gate.ts";
import { parseDelegateParams } from "../../../../src/core/delegate-input.ts";
import type { Clock } from "../../../../src/core/host.ts";
import { emptyUsage, type Usage } from "../../../../src/core/types.ts";
import { windowHeader, plainStyle, type WindowView } from "../../../../src/ui/windows.ts";

const usage = (o: Partial<Usage>): Usage => ({ ...emptyUsage(), ...o });

test("budget fields: positive numbers, whole for turns and tokens; delegate input names the field", () => {
  expect([budgetValue("maxTurns", "3"), budgetValue("maxCost", 0.5)]).toEqual([3, 0.5]);
  expect(budgetValue("maxTokens", 2.5)).toBe("maxTokens must be a positive whole number (got 2.5)");
  expect(
    parseDelegateParams({ tasks: [{ name: "a", prompt: "p", maxTurns: "3", maxCost: 0.5 }] }).tasks[0].budget,
  ).toEqual({ maxTurns: 3, maxCost: 0.5 });
  expect(() => parseDelegateParams({ tasks: [{ name: "a", prompt: "p", maxCost: -1 }] })).toThrow(
    "tasks[0].maxCost must be a positive number (got -1)",
  );
  expect(parseDelegateParams({ tasks: [{ name: "a", prompt: "p", maxTurns: 2 }], maxCost: 1 })).toMatchObject({
    maxCost: 1,
    tasks: [{ budget: { maxTurns: 2 } }],
  });
});

test("spend against budget for windows, and which budget was hit", () => {
  const u = usage({ turns: 3, input: 9000, output: 3000, cost: 0.12 });
  expect(budgetLabel({ maxTurns: 5, maxTokens: 50_000, maxCost: 0.5 }, u)).toBe("turns 3/5 tokens 12k/50k $0.12/$0.50");
  expect(budgetHit({ maxTokens: 12_000 }, u)).toEqual({ key: "maxTokens", limit: 12_000, spent: 12_000 });
  expect(budgetHit({ maxTurns: 4 }, u)).toBeNull();
  const view: WindowView = {
    name: "t",
    status: "running",
    sessionId: "s",
    toolCount: 2,
    elapsedMs: 3000,
    timeoutSec: 600,
    cost: 0.12,
    lines: [],
    budget: "turns 3/5",
    rateWaitSec: 12,
  };
  expect(windowHeader(view, plainStyle)).toBe(
    "● t • default • 2 tools • 3s/600s • turns 3/5 • $0.1200 • waiting: rate limited (12s)",
  );
});

test("budget watch: one wrap-up steer, a stop only if the next turn asks for work again; the call's spend counts", () => {
  const w = budgetWatch({ maxTurns: 2 }, undefined);
  expect(w.onTurn(usage({ turns: 1 }), true, true)).toBeNull();
  expect(w.onTurn(usage({ turns: 2 }), true, true)).toMatchObject({
    steer: expect.stringContaining("Stop working now"),
  });
  expect(w.onTurn(usage({ turns: 3 }), true, true)).toEqual({
    stop: { code: "BUDGET_EXCEEDED", message: "Budget exceeded: maxTurns (turns 3/2)" },
  });
  // A fallback attempt goes on within the same budget: what the failed model spent counts.
  expect(
    budgetWatch({ maxCost: 1 }, undefined, usage({ cost: 0.9 })).onTurn(usage({ turns: 1, cost: 0.2 }), true, true),
  ).toMatchObject({ steer: expect.any(String) });
  // Without a control pipe there is no way to warn: the first hit stops.
  expect(budgetWatch({ maxTurns: 1 }, undefined).onTurn(usage({ turns: 1 }), true, false)).toMatchObject({
    stop: { code: "BUDGET_EXCEEDED" },
  });
  const spend = new CallSpend(1);
  const a = budgetWatch(undefined, { spend, key: "a" });
  const b = budgetWatch(undefined, { spend, key: "b" });
  expect(a.onTurn(usage({ turns: 1, cost: 0.6 }), true, true)).toBeNull();
  expect(b.onTurn(usage({ turns: 1, cost: 0.5 }), true, true)).toMatchObject({
    steer: expect.stringContaining("delegate call's cost budget"),
  });
});

function fakeClock(): Clock & { advance(ms: number): void } {
  let now = 1_000_000;
  const timers: { at: number; fn: () => void }[] = [];
  return {
    now: () => now,
    setTimeout: (fn, ms) => {
      const t = { at: now + ms, fn };
      timers.push(t);
      return t;
    },
    clearTimeout: (h) => {
      const i = timers.indexOf(h as (typeof timers)[number]);
      if (i >= 0) timers.splice(i, 1);
    },
    advance(ms) {
      now += ms;
      for (const t of timers.filter((x) => x.at <= now)) {
        timers.splice(timers.indexOf(t), 1);
        t.fn();
      }
    },
  };
}

test("rate gate: a burst of 429s is one hold (Retry-After) and one halving; slots wait for it; successes raise the limit", async () => {
  const clock = fakeClock();
  const gate = new RateGate(
    4,
    clock,
    { maxWaitMs: 10_000, baseDelayMs: 2000, maxDelayMs: 60_000, raiseAfter: 2 },
    () => 0.5,
  );
  const holds: number[] = [];
  gate.onHold((until) => holds.push(until));
  for (let i = 0; i < 4; i++) gate.limited(3000);
  expect(gate.limit).toBe(2);
  // Retry-After plus a little jitter (0–250 ms; 125 here).
  expect(gate.until).toBe(1_003_125);
  expect(holds).toEqual(Array(4).fill(1_003_125));
  let got = false;
  const slot = gate.acquire().then(() => (got = true));
  await Promise.resolve();
  expect(got).toBe(false);
  clock.advance(3125);
  await slot;
  expect(got).toBe(true);
  gate.succeeded();
  gate.succeeded();
  expect(gate.limit).toBe(3);
  // Without Retry-After: 2 s, then 4 s for the next limit in a row; the total wait is bounded.
  gate.limited();
  expect(gate.remaining()).toBe(2000);
  clock.advance(2000);
  gate.limited();
  expect(gate.remaining()).toBe(4000);
  expect(gate.exhausted).toBe(false);
  clock.advance(4000);
  gate.limited(5000);
  expect(gate.exhausted).toBe(true);
});
