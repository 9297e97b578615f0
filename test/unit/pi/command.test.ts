// /subagents: listing, show, and kill of one running sub-agent or all of them.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore } from "../../../src/core/store/store.ts";
import { emptyUsage } from "../../../src/core/types.ts";
import { ActiveRuns } from "../../../src/pi/active-runs.ts";
import { subagentsCommand } from "../../../src/pi/command.ts";
import type { PiServices } from "../../../src/pi/services.ts";

function setup() {
  const store = new MemoryStore({ isAlive: () => true });
  const id = store.newSessionId();
  store.createSession({ id, name: "review-api", agent: "reviewer", cwd: "/" });
  store.finishRun(store.startRun(id, { prompt: "review", ownerPid: 1 }), {
    status: "completed",
    output: "fine",
    usage: { ...emptyUsage(), cost: 0.5 },
    exitCode: 0,
    toolCount: 0,
    messages: [
      { role: "user", text: "review" },
      { role: "assistant", text: "all fine", toolCalls: [] },
    ],
    stderrTail: "",
    durationMs: 1,
  });
  const active = new ActiveRuns();
  const notes: [string, string | undefined][] = [];
  const ctx = { ui: { notify: (m: string, t?: "info" | "warning" | "error") => notes.push([m, t]) } };
  const cmd = subagentsCommand(async () => ({ store }) as unknown as PiServices, active);
  return { id, active, notes, ctx, cmd };
}

test("lists sessions with status, cost and age; shows one transcript", async () => {
  const { id, notes, ctx, cmd } = setup();
  await cmd.handler("", ctx);
  expect(notes[0][0]).toMatch(new RegExp(`^${id}  completed +reviewer +\\$0\\.5000 +\\d+s ago  review-api$`));
  await cmd.handler(`show ${id}`, ctx);
  expect(notes[1][0]).toContain("all fine");
  await cmd.handler("show 0000000000000000", ctx);
  expect(notes[2]).toEqual([
    'Session "0000000000000000" not found. The session may have expired or the ID is incorrect.',
    "error",
  ]);
});

test("kill ID stops one task's signal and leaves the others running; kill all stops the rest", async () => {
  const { active, notes, ctx, cmd } = setup();
  const a = active.task("aaaaaaaaaaaaaaaa", undefined);
  const b = active.task("bbbbbbbbbbbbbbbb", undefined);
  await cmd.handler("kill", ctx);
  expect(notes.at(-1)![1]).toBe("warning");
  await cmd.handler("kill aaaaaaaaaaaaaaaa", ctx);
  expect(a.signal.aborted).toBe(true);
  expect(b.signal.aborted).toBe(false);
  await cmd.handler("kill aaaaaaaaaaaaaaaa", ctx);
  expect(notes.at(-1)).toEqual(["Sub-agent aaaaaaaaaaaaaaaa is not running here.", "warning"]);
  await cmd.handler("kill all", ctx);
  expect(b.signal.aborted).toBe(true);
  expect(active.running()).toEqual([]);
});

test("/subagents where pi cannot show custom components (RPC): pick a session and an action through select dialogs", async () => {
  const { id, notes } = setup();
  const store = new MemoryStore({ isAlive: () => true });
  store.createSession({ id, name: "review-api", agent: "reviewer", cwd: "/" });
  store.finishRun(store.startRun(id, { prompt: "review", ownerPid: 1 }), {
    status: "completed",
    output: "fine",
    usage: emptyUsage(),
    exitCode: 0,
    toolCount: 0,
    messages: [{ role: "assistant", text: "all fine", toolCalls: [] }],
    stderrTail: "",
    durationMs: 1,
  });
  const data = mkdtempSync(join(tmpdir(), "subagents-cmd-"));
  const rt = { store, agentDir: data, dataDir: data } as unknown as PiServices;
  const asked: [string, string[]][] = [];
  const answers = [(o: string[]) => o[0], () => "Show transcript"];
  const ui = {
    notify: (m: string, t?: "info" | "warning" | "error") => notes.push([m, t]),
    select: async (title: string, options: string[]) => {
      asked.push([title, options]);
      return answers.shift()!(options);
    },
    custom: async <T>() => undefined as T,
  };
  await subagentsCommand(async () => rt, new ActiveRuns()).handler("", { ui, hasUI: true, mode: "rpc" });
  expect(asked[0][0]).toBe("Sub-agents");
  expect(asked[0][1][0]).toMatch(new RegExp(`✓ review-api +reviewer +completed .*${id}$`));
  // A finished session offers only its transcript.
  expect(asked[1]).toEqual([`review-api (${id})`, ["Show transcript"]]);
  expect(notes.at(-1)![0]).toContain("all fine");
  rmSync(data, { recursive: true, force: true });
});

test("a run stopped from /subagents kill says so; an aborted tool call and a shutdown say otherwise", async () => {
  const { abortStop, cancelledBy, ownerShutdown } = await import("../../../src/core/run/process/abort-reason.ts");
  const { active, ctx, cmd } = setup();
  const t = active.task("abc", undefined);
  await cmd.handler("kill abc", ctx);
  expect(abortStop(t.signal.reason)).toEqual({ code: "SUBAGENT_CANCELLED", message: "Stopped from /subagents kill" });
  expect(abortStop(cancelledBy("Cancelled: the tool call was aborted"), false).message).toBe(
    "Cancelled: the tool call was aborted (before it started)",
  );
  expect(abortStop(undefined)).toEqual({ code: "SUBAGENT_CANCELLED", message: "Cancelled" });
  expect(abortStop(ownerShutdown()).code).toBe("SUBAGENT_FAILED");
  // pi's own abort (Esc) reaches a linked call with the reason the front gives it, not pi's.
  const esc = new AbortController();
  const call = active.link(esc.signal, cancelledBy("Cancelled: the tool call was aborted"));
  esc.abort(new Error("pi's reason"));
  expect(abortStop(call.signal.reason).message).toBe("Cancelled: the tool call was aborted");
});
