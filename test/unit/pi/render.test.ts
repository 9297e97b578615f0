// The pi renderers return components; rendered at widths 40 and 120, collapsed and expanded.
import { expect, test } from "bun:test";
import { renderDelegateCall, renderTruncating, renderWindowsResult } from "../../../src/pi/render.ts";
import { callLines, rowBudget } from "../../../src/pi/render-budget.ts";
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

// --- The height budget: what pi's tool row may take of a terminal of `rows` rows (render-budget.ts).

const plainLines = (ls: string[]) => ls.map((l) => l.replace(/\x1b\[[0-9;]*m/g, ""));

/** Renders with the terminal reporting `rows` rows, as pi's own terminal would. */
function withRows<T>(rows: number, fn: () => T): T {
  const had = Object.getOwnPropertyDescriptor(process.stdout, "rows");
  Object.defineProperty(process.stdout, "rows", { value: rows, configurable: true, writable: true });
  try {
    return fn();
  } finally {
    if (had) Object.defineProperty(process.stdout, "rows", had);
    else delete (process.stdout as { rows?: number }).rows;
  }
}

const task = (i: number, over: Partial<WindowedDetails["windows"][number]> = {}) => ({
  name: `task${i}`,
  sessionId: `${i}`.padStart(16, "0"),
  status: "running" as const,
  toolCount: 10 + i,
  elapsedMs: 5_000,
  timeoutSec: 600,
  cost: 0,
  lines: Array.from({ length: 30 }, (_, k) => `bash → step ${i}.${k}`),
  ...over,
});
const callArgs = (n: number) => ({
  tasks: Array.from({ length: n }, (_, i) => ({ name: `task${i}`, prompt: `Look at part ${i}\nmore detail` })),
});
const header = (i: number) => new RegExp(`^[●○✓✗⊘] task${i} •`);

for (const rows of [24, 40]) {
  for (const n of [1, 4, 8, 16]) {
    test(`${n} running at ${rows} rows: the call and its windows fit what pi leaves; the summary and every header show`, () => {
      const d: WindowedDetails = {
        status: "running",
        maxLinesPerWindow: 15,
        sessionIds: [],
        windows: Array.from({ length: n }, (_, i) => task(i, i >= 4 ? { status: "queued", lines: [] } : {})),
      };
      const [call, result] = withRows(rows, () => [
        plainLines(renderDelegateCall(callArgs(n), theme).render(100)),
        plainLines(renderWindowsResult(d, false, theme, "", () => callLines(n, false)).render(100)),
      ]);
      const budget = withRows(rows, () => rowBudget());
      expect(budget).toBe(rows - 9);
      expect(call.length + result.length).toBeLessThanOrEqual(budget);
      expect(result[0]).toStartWith("Sub-agents: ");
      const shown = d.windows.map((_, i) => result.some((l) => header(i).test(l)));
      if (n + 1 <= budget - call.length) expect(shown.every(Boolean)).toBe(true);
      else {
        // More tasks than rows: the running ones first, the rest counted on the last line (the CLI's rule).
        expect(shown.slice(0, 4).every(Boolean)).toBe(true);
        expect(result.at(-1)).toMatch(/^… \d+ more: /);
      }
    });
  }
}

test("the call header says what each task was asked while the rows allow, else names them on one line", () => {
  const at40 = withRows(40, () => plainLines(renderDelegateCall(callArgs(4), theme).render(100)));
  expect(at40).toEqual([
    "delegate_to_subagents 4 sub-agents",
    ...[0, 1, 2, 3].map((i) => `  task${i} — Look at part ${i}`),
  ]);
  const at24 = withRows(24, () => plainLines(renderDelegateCall(callArgs(4), theme).render(100)));
  expect(at24).toEqual(["delegate_to_subagents 4 sub-agents: task0, task1, task2, task3"]);
  // Expanded (Ctrl+O): always a line per task.
  expect(withRows(24, () => renderDelegateCall(callArgs(4), theme, true).render(100))).toHaveLength(5);
  expect(plainLines(renderDelegateCall({ workflow: "review src/" }, theme).render(100))).toEqual([
    "delegate_to_subagents workflow review src/",
  ]);
});

test("an ended call is compact: a line per task, each output's first line when there is room, ids wrapped whole", () => {
  const ended = (n: number): WindowedDetails => ({
    status: "done",
    maxLinesPerWindow: 15,
    sessionIds: [],
    windows: Array.from({ length: n }, (_, i) =>
      task(i, {
        status: i === 1 ? "error" : "completed",
        error: i === 1 ? "Timed out after 600s." : undefined,
        output: `Finding ${i}\nsecond line`,
      }),
    ),
  });
  const four = withRows(40, () => plainLines(renderWindowsResult(ended(4), false, theme, "").render(60)));
  expect(four[0]).toBe("Sub-agents: 0 running, 3 done, 1 error");
  expect(four.filter((l) => l.startsWith("  → "))).toEqual(["  → Finding 0", "  → Finding 2", "  → Finding 3"]);
  expect(four.some((l) => l.includes("step"))).toBe(false);
  expect(four.some((l) => /^✗ task1 • .* — Timed out after 600s\.$/.test(l))).toBe(true);
  // Four ids do not fit 60 columns on one line: they wrap, none is cut.
  const ids = four.filter((l) => /=\d{16}/.test(l)).join(" ");
  for (let i = 0; i < 4; i++) expect(ids).toContain(`task${i}=${`${i}`.padStart(16, "0")}`);
  // A task's warnings stay in view with the outputs.
  const warned = ended(2);
  warned.windows[0].warnings = ["model anthropic/x is not available; ran fake/fake-model"];
  expect(withRows(40, () => plainLines(renderWindowsResult(warned, false, theme, "").render(100)))).toContain(
    "  ⚠ model anthropic/x is not available; ran fake/fake-model",
  );
  // 16 tasks at 24 rows: no room for the outputs, one line each.
  const sixteen = withRows(24, () => plainLines(renderWindowsResult(ended(16), false, theme, "").render(100)));
  expect(sixteen.filter((l) => l.startsWith("  → "))).toEqual([]);
  expect(sixteen.filter((l) => /^[✓✗] task\d+ •/.test(l))).toHaveLength(16);
  // Expanded: every kept line and the outputs.
  const all = withRows(24, () => plainLines(renderWindowsResult(ended(4), true, theme, "").render(100)));
  expect(all.filter((l) => l.includes("bash → step 0."))).toHaveLength(30);
  expect(all).toContain("  second line");
});
