// A run's agent-file warnings (model substituted, tools missing) are shown under its window header and kept
// in its record, in both stores; an existing database gets the new column by migration.
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore, Store } from "../../../src/core/store/store.ts";
import { failedResult } from "../../../src/core/run/task-error.ts";
import { bunDbOpener } from "../../../src/host/sqlite-bun.ts";
import { CallWindows } from "../../../src/ui/call-windows.ts";
import { plainStyle, renderWindow } from "../../../src/ui/windows.ts";
import { visibleWidth } from "../../../src/ui/text-width.ts";

test("warnings show under the window header, clipped to the width, and survive the task's end", () => {
  const w = new CallWindows([{ name: "t", sessionId: "s1", profile: "on-sonnet", timeoutSec: 600 }], 5);
  w.start(0, 0);
  w.warn(0, [
    'model "sonnet" is a Claude model and there are no Anthropic credentials here: running on fake/fake-model instead',
  ]);
  const lines = renderWindow(w.snapshot(1000).windows[0], {
    width: 50,
    maxLines: 5,
    expanded: false,
    style: plainStyle,
  });
  expect(lines[1]).toStartWith('  ⚠ model "sonnet"');
  for (const l of lines) expect(visibleWidth(l)).toBeLessThanOrEqual(50);
  const result = {
    ...failedResult("x", "SUBAGENT_FAILED"),
    status: "completed" as const,
    warnings: ["tools not available here: WebFetch"],
  };
  w.end(0, { sessionId: "s1", name: "t", agent: "on-sonnet", result }, 2000);
  expect(w.snapshot(2000).windows[0].warnings).toEqual(["tools not available here: WebFetch"]);
});

for (const [kind, make] of [
  [
    "sqlite",
    () =>
      new Store(bunDbOpener(Database)(join(mkdtempSync(join(tmpdir(), "subagents-warn-")), "s.db")), {
        isAlive: () => true,
      }),
  ],
  ["memory", () => new MemoryStore({ isAlive: () => true })],
] as const) {
  test(`${kind} store keeps a run's warnings; runs without any have none`, () => {
    const s = make();
    s.createSession({ id: "a1", name: "n", agent: "on-haiku", cwd: "/" });
    const run = s.startRun("a1", { prompt: "p", ownerPid: 1 });
    s.finishRun(run, { ...failedResult("boom", "SUBAGENT_FAILED"), warnings: ['model "haiku" fell back'] });
    const again = s.startRun("a1", { prompt: "p2", ownerPid: 1 });
    s.finishRun(again, failedResult("boom", "SUBAGENT_FAILED"));
    const runs = s.getSession("a1")!.runs;
    expect(runs[0].warnings).toEqual(['model "haiku" fell back']);
    expect(runs[1].warnings).toBeUndefined();
  });
}
