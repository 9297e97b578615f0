// The pi renderers return components; rendered at widths 40 and 120, collapsed and expanded.
import { expect, test } from "bun:test";
import { renderDelegateCall, renderTruncating, renderWindowsResult } from "../../../src/pi/render.ts";
import { visibleWidth } from "../../../src/ui/text-width.ts";
import type { WindowedDetails } from "../../../src/ui/windows.ts";

// A theme that marks colours visibly, so the test can see which parts were coloured.
const theme = {
  fg: (c: string, t: string) => `\x1b[3${c.length % 8}m${t}\x1b[0m`,
  bold: (t: string) => `\x1b[1m${t}\x1b[22m`,
};

const details: WindowedDetails = {
  status: "running",
  maxLinesPerWindow: 3,
  sessionIds: ["a3f7b9c2d1e8f4a1", "f4e1d8a7c0b39265"],
  windows: [
    {
      name: "build-assets",
      sessionId: "a3f7b9c2d1e8f4a1",
      status: "running",
      profile: "worker",
      model: "anthropic/claude-sonnet-4-5",
      toolCount: 4,
      elapsedMs: 3_200,
      timeoutSec: 600,
      cost: 0.01,
      lines: ["ls → src/", "  2 files, 1 dir", "bash → npm run build", "Building the bundle now, this takes a while"],
    },
    {
      name: "run-tests",
      sessionId: "f4e1d8a7c0b39265",
      status: "error",
      toolCount: 1,
      elapsedMs: 300_000,
      timeoutSec: 300,
      cost: 0,
      lines: ["bash → npm test"],
      error: "Timed out after 300s. Consider resuming with a longer timeout.",
    },
  ],
};

for (const width of [40, 120]) {
  test(`delegate windows at width ${width}: collapsed shows the last lines, expanded all; nothing wider than the width`, () => {
    const collapsed = renderWindowsResult(details, false, theme, "").render(width);
    const expanded = renderWindowsResult(details, true, theme, "").render(width);
    for (const l of [...collapsed, ...expanded]) expect(visibleWidth(l)).toBeLessThanOrEqual(width);
    const plain = (ls: string[]) => ls.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ""));
    expect(plain(collapsed)[0]).toBe("Sub-agents: 1 running, 0 done, 1 error");
    expect(plain(collapsed).some((l) => l.includes("ls → src/"))).toBe(false);
    expect(plain(expanded).some((l) => l.includes("ls → src/"))).toBe(true);
    expect(plain(collapsed).some((l) => l.includes("Timed out after 300s"))).toBe(true);
    // Still running: no session footer yet.
    expect(plain(collapsed).some((l) => l.startsWith("Sessions:"))).toBe(false);
  });

  test(`retrieval output at width ${width}: truncated to maxLines with the spec's marker`, () => {
    const text = Array.from({ length: 60 }, (_, i) => `output line ${i}`).join("\n");
    const c = renderTruncating(text, 15, false, theme)
      .render(width)
      .map((l) => l.replace(/\x1b\[[0-9;]*m/g, ""));
    expect(c).toHaveLength(16);
    expect(c.at(-1)).toBe("... (45 more lines)");
    expect(renderTruncating(text, 15, true, theme).render(width)).toHaveLength(60);
  });
}

test("renderCall names the task count and profiles", () => {
  const line = renderDelegateCall(
    { profile: "researcher", tasks: [{ profile: "writer" }, {}, { profile: "researcher" }] },
    theme,
  )
    .render(200)[0]
    .replace(/\x1b\[[0-9;]*m/g, "");
  expect(line).toBe("delegate_to_subagents 3 sub-agents (default profile: researcher) profiles: [writer, researcher]");
});

test("expanded windows name the pi the children ran; collapsed ones do not", () => {
  const withPi: WindowedDetails = { ...details, pi: "pi 1.5.2 · bun 1.4.5 · embedded (/opt/subagents)" };
  const plain = (ls: string[]) => ls.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ""));
  expect(plain(renderWindowsResult(withPi, true, theme, "").render(120)).at(-1)).toBe(
    "children: pi 1.5.2 · bun 1.4.5 · embedded (/opt/subagents)",
  );
  expect(plain(renderWindowsResult(withPi, false, theme, "").render(120)).some((l) => l.startsWith("children:"))).toBe(
    false,
  );
});
