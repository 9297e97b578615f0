// Fitting the live frame to a terminal (ui/frame.ts): every task keeps its header line, whatever the size.
import { expect, test } from "bun:test";
import { fitFrame } from "../../../src/ui/frame.ts";
import { visibleWidth } from "../../../src/ui/text-width.ts";
import { plainStyle, type WindowView } from "../../../src/ui/windows.ts";

const view = (i: number, over: Partial<WindowView> = {}): WindowView => ({
  name: `task-${i}`,
  status: "running",
  sessionId: `s${i}`,
  toolCount: 1,
  elapsedMs: 3000,
  timeoutSec: 600,
  cost: 0,
  lines: Array.from({ length: 30 }, (_, k) => `line ${i}.${k}`),
  ...over,
});

const headers = (lines: string[]) => lines.filter((l) => /^[●○✓✗⊘] task-\d+ •/.test(l)).map((l) => l.split(" ")[1]);

for (const [count, rows, width] of [
  [8, 23, 119],
  [16, 39, 119],
  [4, 19, 59],
  [8, 19, 59],
  [16, 19, 59],
] as const) {
  test(`${count} running tasks in ${width + 1}×${rows + 1}: every header, nothing wider or taller than the terminal`, () => {
    const views = Array.from({ length: count }, (_, i) => view(i + 1));
    const lines = fitFrame(views, { width, rows, maxLines: 5, style: plainStyle });
    expect(headers(lines)).toEqual(views.map((v) => v.name));
    expect(lines.length).toBeLessThanOrEqual(rows);
    for (const l of lines) expect(visibleWidth(l)).toBeLessThanOrEqual(width);
  });
}

test("a window left with no rows shows no body (slice(-0) is the whole array)", () => {
  const views = Array.from({ length: 8 }, (_, i) => view(i + 1));
  const lines = fitFrame(views, { width: 100, rows: 10, maxLines: 5, style: plainStyle });
  expect(lines.length).toBeLessThanOrEqual(10);
  expect(headers(lines).length).toBe(8);
});

test("finished tasks collapse to one line (with the reason) before running windows lose lines", () => {
  const views = [
    view(1, { status: "completed" }),
    view(2, { status: "error", error: "provider said 503" }),
    view(3, { status: "cancelled" }),
    view(4),
  ];
  const lines = fitFrame(views, { width: 100, rows: 12, maxLines: 5, style: plainStyle });
  expect(lines.filter((l) => l.includes("line 1.") || l.includes("line 2.") || l.includes("line 3."))).toEqual([]);
  expect(lines.some((l) => l.startsWith("✗ task-2 •") && l.endsWith("— provider said 503"))).toBe(true);
  expect(lines.some((l) => l.startsWith("⊘ task-3 •") && l.endsWith("— cancelled"))).toBe(true);
  expect(lines.filter((l) => l.includes("line 4.")).length).toBe(5);
});

test("when not even the headers fit, running tasks come first and the rest is counted", () => {
  const views = Array.from({ length: 16 }, (_, i) =>
    view(i + 1, { status: i < 4 ? "running" : i < 10 ? "completed" : "queued" }),
  );
  const lines = fitFrame(views, { width: 100, rows: 8, maxLines: 5, style: plainStyle });
  expect(lines.length).toBe(8);
  expect(headers(lines).slice(0, 4)).toEqual(["task-1", "task-2", "task-3", "task-4"]);
  expect(lines.at(-1)).toBe("… 10 more: 0 running, 4 done, 6 queued");
});

test("a collapsed failed task keeps room for why it failed, giving up the model first", () => {
  const v = view(1, {
    status: "error",
    name: "fails-on-purpose",
    profile: "default",
    model: "fake/fake-model",
    toolCount: 2,
    error: "demo: this task fails on purpose (missing-file.txt)",
  });
  const lines = fitFrame([v, view(2)], { width: 69, rows: 4, maxLines: 5, style: plainStyle });
  expect(lines[1]).toBe("✗ fails-on-purpose • 2 tools • 3.0s — demo: this task fails on purpo…");
});

test("rows that do not divide evenly go to the busiest windows (most tool calls)", () => {
  const views = [view(1, { toolCount: 2 }), view(2, { toolCount: 9 }), view(3, { toolCount: 4 })];
  // 11 rows: the summary, three headers, 7 body lines: 2 each, and the spare one to task-2.
  const lines = fitFrame(views, { width: 100, rows: 11, maxLines: 15, style: plainStyle });
  const body = (i: number) => lines.filter((l) => l.includes(`line ${i}.`)).length;
  expect([body(1), body(2), body(3)]).toEqual([2, 3, 2]);
  // 12 rows: the next spare one to the next busiest.
  const more = fitFrame(views, { width: 100, rows: 12, maxLines: 15, style: plainStyle });
  expect([1, 2, 3].map((i) => more.filter((l) => l.includes(`line ${i}.`)).length)).toEqual([2, 3, 3]);
});
