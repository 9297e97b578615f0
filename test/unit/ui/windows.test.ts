// Window rendering (docs/cli.md "What it looks like") at narrow and wide widths, collapsed and expanded.
import { expect, test } from "bun:test";
import { clip, sanitizeLine, visibleWidth } from "../../../src/ui/text-width.ts";
import {
  displayLines,
  globalHeader,
  plainStyle,
  renderWindows,
  windowHeader,
  type WindowView,
} from "../../../src/ui/windows.ts";

const view = (over: Partial<WindowView> = {}): WindowView => ({
  name: "review-api",
  status: "running",
  sessionId: "a3f7b9c2d1e8f4a1",
  profile: "reviewer",
  model: "anthropic/claude-sonnet",
  thinking: "high",
  toolCount: 3,
  elapsedMs: 12_400,
  timeoutSec: 600,
  cost: 0.0123,
  lines: Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? `read → src/file${i}.ts` : `line ${i}`)),
  ...over,
});

test("header shows icon, name, profile (provider/model thinking), tools, elapsed/timeout, cost", () => {
  expect(windowHeader(view(), plainStyle)).toBe(
    "● review-api • reviewer (anthropic/claude-sonnet high) • 3 tools • 12s/600s • $0.0123",
  );
  // Finished: the time is frozen and the timeout no longer matters.
  expect(windowHeader(view({ status: "completed", toolCount: 1, cost: 0 }), plainStyle)).toBe(
    "✓ review-api • reviewer (anthropic/claude-sonnet high) • 1 tool • 12s",
  );
  expect(windowHeader(view({ status: "cancelled", elapsedMs: 4_200 }), plainStyle)).toStartWith(
    "⊘ review-api • reviewer (anthropic/claude-sonnet high) • 3 tools • 4.2s",
  );
});

test("the header keeps its shape: the profile is named before the model is known; queued tasks show no counters", () => {
  const before = windowHeader(view({ profile: undefined, model: undefined, thinking: undefined, cost: 0 }), plainStyle);
  const after = windowHeader(view({ profile: undefined, thinking: undefined, cost: 0 }), plainStyle);
  expect(before).toBe("● review-api • default • 3 tools • 12s/600s");
  expect(after).toBe("● review-api • default (anthropic/claude-sonnet) • 3 tools • 12s/600s");
  expect(windowHeader(view({ status: "queued" }), plainStyle)).toBe("○ review-api • reviewer • queued");
});

test("narrow headers drop the model first, then cost, profile and tools; never elapsed/timeout", () => {
  const v = view();
  expect(windowHeader(v, plainStyle, 60)).toBe("● review-api • reviewer • 3 tools • 12s/600s • $0.0123");
  expect(windowHeader(v, plainStyle, 45)).toBe("● review-api • reviewer • 3 tools • 12s/600s");
  expect(windowHeader(v, plainStyle, 30)).toBe("● review-api • 12s/600s");
  const long = windowHeader(view({ name: "a-very-long-task-name-that-goes-on-and-on" }), plainStyle, 30);
  expect(long).toEndWith(" • 12s/600s");
  expect(visibleWidth(long)).toBeLessThanOrEqual(30);
});

test("retries read `↻ retry 2/3 in 4s — 503 …`, without the failed attempt's ✗ line; one failure retried is one line", () => {
  const lines = displayLines([
    "read → a.ts",
    "✗ 503 overloaded",
    "↻ retry 1/3 in 2s: 503 overloaded",
    "✗ 503 overloaded",
    "↻ retry 2/3 in 4s: 503 overloaded",
    "✗ 429 slow down",
    "↻ retry 3/3 in 8s: 429 slow down",
    "",
  ]);
  expect(lines).toEqual(["read → a.ts", "↻ retry 2/3 in 4s — 503 overloaded", "↻ retry 3/3 in 8s — 429 slow down"]);
});

test("a step repeated as it was (a call with its result, an error) is one step marked ×N; different steps stay", () => {
  const finalize = ["finalize → ERROR", "  ✗ result must match the schema"];
  const lines = displayLines([
    "read → a.ts",
    ...finalize,
    ...finalize,
    ...finalize,
    "✗ 500 Internal Server Error",
    "✗ 500 Internal Server Error",
    "read → a.ts",
    "read → b.ts",
  ]);
  expect(lines).toEqual([
    "read → a.ts",
    "finalize → ERROR ×3",
    "  ✗ result must match the schema",
    "✗ 500 Internal Server Error ×2",
    "read → a.ts",
    "read → b.ts",
  ]);
});

test("turns and tokens follow the time; a started task whose child has not reported says so", () => {
  const v = view({ turns: 3, tokens: { in: 12_345, out: 678 }, cost: 0 });
  expect(windowHeader(v, plainStyle)).toBe(
    "● review-api • reviewer (anthropic/claude-sonnet high) • 3 tools • 12s/600s • 3 turns • ↑12k ↓678",
  );
  // Narrow: the tokens go before the turns, the turns before the tools.
  expect(windowHeader(v, plainStyle, 60)).toBe("● review-api • reviewer • 3 tools • 12s/600s • 3 turns");
  expect(windowHeader(view({ starting: true, cost: 0, elapsedMs: 2_000 }), plainStyle)).toBe(
    "● review-api • reviewer (anthropic/claude-sonnet high) • starting • 2s/600s",
  );
});

test("a cancelled task is counted apart from errors and says it was cancelled", () => {
  const views = [view({ status: "cancelled", error: "Cancelled" }), view({ status: "error", error: "boom" })];
  expect(globalHeader(views)).toBe("Sub-agents: 0 running, 0 done, 1 error, 1 cancelled");
  const lines = renderWindows(views, { width: 80, maxLines: 2, expanded: false, style: plainStyle, showFooter: false });
  expect(lines).toContain("  cancelled");
  expect(lines).toContain("  boom");
  expect(lines).not.toContain("  Cancelled");
});

test("pi view: collapsed shows the first line of a task's output, expanded its (bounded) output", () => {
  const v = view({ status: "completed", output: "\nFirst finding.\nSecond finding.", lines: ["read → a.ts"] });
  const collapsed = renderWindows([v], {
    width: 80,
    maxLines: 5,
    expanded: false,
    style: plainStyle,
    showFooter: false,
  });
  expect(collapsed).toContain("  → First finding.");
  expect(collapsed.join("\n")).not.toContain("Second finding.");
  const expanded = renderWindows([v], { width: 80, maxLines: 5, expanded: true, style: plainStyle, showFooter: false });
  expect(expanded).toContain("  ── output ──");
  expect(expanded).toContain("  Second finding.");
});

test("global header counts running, done and error", () => {
  const views = [view(), view({ status: "completed" }), view({ status: "error" }), view({ status: "running" })];
  expect(globalHeader(views)).toBe("Sub-agents: 2 running, 1 done, 1 error");
});

for (const width of [40, 120]) {
  test(`collapsed at width ${width}: last maxLines lines, every line within the width`, () => {
    const lines = renderWindows(
      [
        view(),
        view({
          name: "other",
          status: "error",
          error: "Timed out after 600s. Consider resuming with a longer timeout.",
        }),
      ],
      {
        width,
        maxLines: 5,
        expanded: false,
        style: plainStyle,
      },
    );
    for (const l of lines) expect(visibleWidth(l)).toBeLessThanOrEqual(width);
    expect(lines.some((l) => l.includes("line 29"))).toBe(true);
    expect(lines.some((l) => l.includes("line 20"))).toBe(false);
    expect(lines.some((l) => l.includes("25 earlier lines"))).toBe(true);
    expect(lines.some((l) => l.startsWith("  Timed out"))).toBe(true);
  });

  test(`expanded at width ${width}: every line`, () => {
    const lines = renderWindows([view({ status: "completed" })], {
      width,
      maxLines: 5,
      expanded: true,
      style: plainStyle,
    });
    expect(lines.filter((l) => l.startsWith("  line ")).length).toBe(20);
    // All done: the footer names the session ids for the retrieval tools.
    expect(lines.at(-1)).toContain("a3f7b9c2d1e8f4a1");
  });
}

test("clip respects wide characters and ANSI, and child text cannot inject escapes", () => {
  expect(visibleWidth("日本語")).toBe(6);
  expect(visibleWidth("\x1b[31mred\x1b[0m")).toBe(3);
  const c = clip("日本語のテキスト", 7);
  expect(visibleWidth(c)).toBeLessThanOrEqual(7);
  expect(c.endsWith("…")).toBe(true);
  expect(sanitizeLine("a\x1b[2Jb\x1b]0;title\x07c\td")).toBe("abc  d");
});

test("composition in windows: a waiting task names what it waits for, a skipped one says why, the header counts it", async () => {
  const { CallWindows } = await import("../../../src/ui/call-windows.ts");
  const { failedResult } = await import("../../../src/core/run/task-error.ts");
  const { globalHeader, renderWindow, plainStyle } = await import("../../../src/ui/windows.ts");
  const { fleetRows } = await import("../../../src/ui/fleet.ts");
  const w = new CallWindows(
    [
      { name: "scout", sessionId: "a", timeoutSec: 600 },
      { name: "fix", sessionId: "b", timeoutSec: 600, after: ["scout"] },
    ],
    5,
  );
  const opts = { width: 100, maxLines: 5, expanded: false, style: plainStyle };
  expect(renderWindow(w.snapshot(0).windows[1], opts)[0]).toBe("○ fix • default • waiting: after scout");
  w.end(
    1,
    {
      sessionId: "b",
      name: "fix",
      agent: "default",
      result: failedResult('skipped: "scout" did not complete', "SKIPPED"),
    },
    0,
  );
  const view = w.snapshot(0).windows[1];
  expect(view.status).toBe("skipped");
  expect(renderWindow(view, opts)).toEqual(["↷ fix • default • skipped", '  skipped: "scout" did not complete']);
  expect(globalHeader(w.snapshot(0).windows)).toBe("Sub-agents: 0 running, 0 done, 1 skipped, 1 queued");
  const rows = fleetRows(
    [],
    [
      {
        id: "b",
        name: "fix",
        agent: "default",
        cwd: "/",
        status: "error",
        lastErrorCode: "SKIPPED",
        cost: 0,
        tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        durationMs: 0,
        runCount: 1,
        createdAt: 0,
        updatedAt: 0,
      },
    ],
    1,
  );
  expect(rows[0].status).toBe("skipped");
});

test("/subagents: a queued task that waits for others says so", async () => {
  const { fleetRows, renderFleet } = await import("../../../src/ui/fleet.ts");
  const { plainStyle } = await import("../../../src/ui/windows.ts");
  const rows = fleetRows(
    [
      {
        id: "q1",
        name: "fix",
        agent: "worker",
        status: "queued",
        ownerPid: 7,
        role: "cli",
        startedAt: null,
        after: ["scout", "review"],
      },
    ],
    [],
    1,
  );
  const line = renderFleet(rows, 0, { width: 200, style: plainStyle, now: 0 })[1];
  expect(line).toContain("waiting");
  expect(line).toContain("after scout, review");
});

test("/subagents at 60 columns: the keys whole on a line of their own, every id whole; steer and stop only for a live pick", async () => {
  const { renderFleet } = await import("../../../src/ui/fleet.ts");
  const rows = [
    {
      id: "9c1e4f7a2b3d5e60",
      name: "review-auth-flows",
      agent: "reviewer",
      status: "running" as const,
      owner: "this pi",
      since: 0,
      cost: 0,
    },
    {
      id: "4a8d2c6e1f0b7a93",
      name: "docs",
      agent: "default",
      status: "completed" as const,
      owner: "",
      since: 0,
      cost: 0.0123,
    },
    {
      id: "1d7e9b2c4f6a8e05",
      name: "fix",
      agent: "worker",
      status: "queued" as const,
      owner: "cli 1234",
      since: 0,
      cost: 0,
      after: ["review-auth-flows"],
    },
  ];
  const live = renderFleet(rows, 0, { width: 60, style: plainStyle, now: 65_000 });
  for (const l of live) expect(visibleWidth(l)).toBeLessThanOrEqual(60);
  expect(live[1]).toBe("↑↓ select · Enter open · s steer · x stop · Esc close");
  for (const r of rows) expect(live.some((l) => l.endsWith(r.id) && l.includes(r.name))).toBe(true);
  const ended = renderFleet(rows, 1, { width: 120, style: plainStyle, now: 65_000 });
  expect(ended[0]).toBe("Sub-agents · 2 running · ↑↓ select · Enter open · Esc close");
});

test("the fleet list in a few lines: exactly that many, the picked row always among them, cut sides counted", async () => {
  const { renderFleet, visibleRows } = await import("../../../src/ui/fleet.ts");
  const rows = Array.from({ length: 30 }, (_, i) => ({
    id: `${String(i).padStart(2, "0")}00000000000000`,
    name: `task-${i}`,
    agent: "default",
    status: "completed" as const,
    owner: "",
    since: 0,
    cost: 0,
  }));
  for (const lines of [3, 5, 12, 29])
    for (const selected of [0, 1, 10, 28, 29]) {
      const [from, to] = visibleRows(rows.length, selected, lines);
      const at = `${lines} lines, row ${selected}`;
      expect(selected >= from && selected < to, at).toBe(true);
      expect(to - from + (from > 0 ? 1 : 0) + (to < rows.length ? 1 : 0), at).toBe(lines);
      const out = renderFleet(rows, selected, { width: 100, style: plainStyle, now: 0, maxLines: lines + 1 });
      expect(out.length, at).toBe(lines + 1);
      expect(
        out.some((l) => l.startsWith("▸ ") && l.includes(`task-${selected} `)),
        at,
      ).toBe(true);
      if (from > 0) expect(out[1], at).toBe(`  ↑ ${from} more`);
      if (to < rows.length) expect(out.at(-1), at).toBe(`  ↓ ${rows.length - to} more`);
    }
  expect(visibleRows(30, 7, 30)).toEqual([0, 30]);
  expect(renderFleet(rows, 0, { width: 100, style: plainStyle, now: 0 }).length).toBe(31);
});

test("a started task reads `starting` until its child's first event", async () => {
  const { CallWindows } = await import("../../../src/ui/call-windows.ts");
  const { newRunState } = await import("../../../src/core/run/process/run-state.ts");
  const w = new CallWindows([{ name: "scout", sessionId: "a", timeoutSec: 600 }], 5);
  expect(w.snapshot(0).windows[0].starting).toBeUndefined();
  w.start(0, 0);
  expect(windowHeader(w.snapshot(2_000).windows[0], plainStyle)).toBe("● scout • default • starting • 2s/600s");
  w.event(0, newRunState(0));
  expect(w.snapshot(2_000).windows[0].starting).toBeUndefined();
});

test("the call runner's events drive the windows; warnings and recorded events ask for no redraw of their own", async () => {
  const { CallWindows } = await import("../../../src/ui/call-windows.ts");
  const { newRunState } = await import("../../../src/core/run/process/run-state.ts");
  const { failedResult } = await import("../../../src/core/run/task-error.ts");
  type Event = Parameters<InstanceType<typeof CallWindows>["apply"]>[0];
  const w = new CallWindows([{ name: "scout", sessionId: "a", timeoutSec: 600 }], 5);
  const task = { name: "scout", sessionId: "a" } as Extract<Event, { type: "taskStart" }>["task"];
  expect(w.apply({ type: "taskStart", index: 0, task }, 0)).toBe(true);
  expect(w.snapshot(1_000).windows[0]).toMatchObject({ status: "running", starting: true, elapsedMs: 1_000 });
  expect(w.apply({ type: "taskWarnings", index: 0, warnings: ["model substituted"] }, 0)).toBe(false);
  expect(w.views[0].warnings).toEqual(["model substituted"]);
  const state = { ...newRunState(0), toolCount: 3 };
  expect(w.apply({ type: "taskProgress", index: 0, state, event: { type: "turn_start" } }, 0)).toBe(true);
  expect(w.views[0].toolCount).toBe(3);
  const payload = {} as Extract<Event, { type: "recorded" }>["payload"];
  expect(w.apply({ type: "recorded", index: 0, payload }, 0)).toBe(false);
  const outcome = { sessionId: "a", name: "scout", agent: "default", result: failedResult("boom", "SUBAGENT_FAILED") };
  expect(w.apply({ type: "taskEnd", index: 0, outcome }, 2_000)).toBe(true);
  expect(w.views[0]).toMatchObject({ status: "error", error: "boom", elapsedMs: 2_000 });
});
