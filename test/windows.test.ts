// Window rendering (spec 000 layout) at narrow and wide widths, collapsed and expanded.
import { expect, test } from "bun:test";
import { clip, sanitizeLine, visibleWidth } from "../src/ui/text-width.ts";
import { globalHeader, plainStyle, renderWindows, windowHeader, type WindowView } from "../src/ui/windows.ts";

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

test("header follows spec 000: icon, name, profile (provider/model thinking), tools, elapsed/timeout, cost", () => {
  expect(windowHeader(view(), plainStyle)).toBe("● review-api • reviewer (anthropic/claude-sonnet high) • 3 tools • 12s/600s • $0.0123");
  expect(windowHeader(view({ status: "completed", toolCount: 1, cost: 0 }), plainStyle)).toBe("✓ review-api • reviewer (anthropic/claude-sonnet high) • 1 tool • 12s/600s");
});

test("global header counts running, done and error", () => {
  const views = [view(), view({ status: "completed" }), view({ status: "error" }), view({ status: "running" })];
  expect(globalHeader(views)).toBe("Sub-agents: 2 running, 1 done, 1 error");
});

for (const width of [40, 120]) {
  test(`collapsed at width ${width}: last maxLines lines, every line within the width`, () => {
    const lines = renderWindows([view(), view({ name: "other", status: "error", error: "Timed out after 600s. Consider resuming with a longer timeout." })], {
      width,
      maxLines: 5,
      expanded: false,
      style: plainStyle,
    });
    for (const l of lines) expect(visibleWidth(l)).toBeLessThanOrEqual(width);
    expect(lines.some((l) => l.includes("line 29"))).toBe(true);
    expect(lines.some((l) => l.includes("line 20"))).toBe(false);
    expect(lines.some((l) => l.includes("25 earlier lines"))).toBe(true);
    expect(lines.some((l) => l.startsWith("  Timed out"))).toBe(true);
  });

  test(`expanded at width ${width}: every line`, () => {
    const lines = renderWindows([view({ status: "completed" })], { width, maxLines: 5, expanded: true, style: plainStyle });
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
