// /subagents' fleet view without a terminal: a followed window keeps its newest lines in a short screen, and a
// steer or stop is asked on the view's own lines, so keys typed at once after `s` or `x` reach it (pi's dialogs,
// opened after the view had closed, let the first keys fall into pi's editor).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore } from "../../../src/core/store/memory-store.ts";
import { type FleetAction, FleetView, fittedWindow } from "../../../src/pi/fleet-view.ts";
import type { PiServices } from "../../../src/pi/services.ts";
import { plainStyle, type WindowView } from "../../../src/ui/windows.ts";

const data = mkdtempSync(join(tmpdir(), "subagents-fleet-"));
afterAll(() => rmSync(data, { recursive: true, force: true }));

const view = (status: WindowView["status"], lines: number): WindowView => ({
  name: "worker",
  status,
  sessionId: "0123456789abcdef",
  toolCount: lines,
  elapsedMs: 1000,
  timeoutSec: 600,
  cost: 0,
  lines: Array.from({ length: lines }, (_, i) => `bash → echo step ${i + 1}`),
  ...(status === "completed" ? { output: Array.from({ length: 30 }, (_, i) => `out ${i + 1}`).join("\n") } : {}),
});

test("a followed window in a short screen shows its newest steps; an ended one its output from the start", () => {
  const running = fittedWindow(view("running", 30), 8, 100, plainStyle);
  expect(running).toHaveLength(8);
  expect(running[0]).toContain("worker");
  expect(running.at(-1)).toContain("echo step 30");
  expect(running.join("\n")).not.toContain("echo step 1\n");
  expect(running.join("\n")).toContain("earlier lines");
  const ended = fittedWindow(view("completed", 3), 8, 100, plainStyle);
  expect(ended).toHaveLength(8);
  expect(ended.join("\n")).toContain("out 1");
  expect(ended.at(-1)).toContain("subagents session 0123456789abcdef has it all");
});

function fleet() {
  const store = new MemoryStore({ isAlive: () => true });
  const add = (name: string, end?: "completed") => {
    const id = store.newSessionId();
    store.createSession({ id, name, agent: "default", cwd: data });
    const run = store.startRun(id, { prompt: "p", ownerPid: process.pid });
    if (end)
      store.finishRun(run, {
        status: "completed",
        output: "x",
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, turns: 1 },
        exitCode: 0,
        toolCount: 0,
        messages: [],
        stderrTail: "",
        durationMs: 1,
      });
    return id;
  };
  const live = add("live");
  const done = add("done", "completed");
  const acted: [FleetAction["kind"], string, string | undefined][] = [];
  let closed = false;
  const v = new FleetView(
    { store, dataDir: data } as unknown as PiServices,
    { requestRender: () => {} },
    { fg: (_c: string, t: string) => t, bold: (t: string) => t } as never,
    () => (closed = true),
    undefined,
    (a, text) => acted.push([a.kind, a.id, text]),
  );
  const at = (id: string) => {
    for (let i = 0; i < 5; i++) v.handleInput("\x1b[A");
    while (!v.render(120).some((l) => l.startsWith("▸") && l.includes(id))) v.handleInput("\x1b[B");
  };
  return { v, live, done, acted, closed: () => closed, at };
}

test("s then the text at once, Enter: one steer with all of it; x then y stops, x then n does not; an ended one says so", () => {
  const f = fleet();
  try {
    f.at(f.live);
    for (const key of ["s", "C", "h", "a", "n", "g", "e", " ", "\x1b[200~of plan\x1b[201~", "\x7f", "n", "\r"])
      f.v.handleInput(key);
    f.v.handleInput("x");
    expect(f.v.render(120).join("\n")).toContain("Stop live?");
    f.v.handleInput("n");
    f.v.handleInput("x");
    f.v.handleInput("y");
    expect(f.acted).toEqual([
      ["steer", f.live, "Change of plan"],
      ["stop", f.live, undefined],
    ]);
    // Esc leaves a steer being typed, then the view.
    f.v.handleInput("s");
    f.v.handleInput("q");
    f.v.handleInput("\x1b");
    expect(f.closed()).toBe(false);
    f.at(f.done);
    f.v.handleInput("s");
    expect(f.v.render(120).join("\n")).toContain("is not running (completed)");
    f.v.handleInput("\x1b");
    expect(f.closed()).toBe(true);
    expect(f.acted).toHaveLength(2);
  } finally {
    f.v.dispose();
  }
});
