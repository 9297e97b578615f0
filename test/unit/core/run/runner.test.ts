// The runner against real child processes (fake-pi scripts) for the faults a real pi will not produce on
// demand: hangs, ignored SIGTERM, grandchildren, crashes, floods, split UTF-8, garbage, loops, timeouts.
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../../../src/core/host.ts";
import { CONTINUE_TEXT, runChild, type RunSpec } from "../../../../src/core/run/process/runner.ts";
import { RateGate } from "../../../../src/core/run/process/rate-gate.ts";
import { createBunHost } from "../../../../src/host/bun.ts";
import { taskWhy } from "../../../support/pi-env.ts";

const host = createBunHost(() => {
  throw new Error("no database in runner tests");
});
const dir = mkdtempSync(join(tmpdir(), "subagents-runner-"));
const FAKE = join(import.meta.dir, "..", "..", "..", "fake-pi", "fake-pi.ts");
const FAKE_JSON = join(import.meta.dir, "..", "..", "..", "fake-pi", "fake-pi-json.ts");

function spec(mode: string, over: Partial<RunSpec> = {}, env: Record<string, string> = {}): RunSpec {
  const sessionFile = join(dir, `${mode}-${Math.random().toString(16).slice(2)}.jsonl`);
  return {
    argv: [process.execPath, FAKE, "--session", sessionFile],
    env: { PATH: process.env.PATH ?? "", FAKE_PI_MODE: mode, ...env },
    sessionFile,
    cwd: dir,
    prompt: "the task",
    transport: "compact",
    finalize: "required",
    timeoutSec: 30,
    extendDebounceSec: 30,
    maxRuntimeSec: 60,
    loopingToolCount: 5,
    exitGraceMs: 300,
    killGraceMs: 500,
    ...over,
  };
}

/** Alive and not a zombie (orphans are re-parented to a PID 1 that may never reap them). */
const alive = (pid: number) => host.isAlive(pid);

test("a normal child: finalized result, usage, tool count, messages", async () => {
  const r = await runChild(host, realClock, spec("normal"));
  expect(r.status, taskWhy(r)).toBe("completed");
  expect(r.output).toBe("normal result");
  expect(r.usage).toMatchObject({ input: 10, output: 5, turns: 1 });
  expect(r.usage.cost).toBeCloseTo(0.001);
  expect(r.model).toBe("fake/fake-model");
  expect(r.toolCount).toBe(1);
  expect(r.messages[0]).toEqual({ role: "user", text: "the task" });
});

test("with a pi that settles, only agent_settled ends the run; an older pi's agent_end + grace does", async () => {
  const settled = await runChild(host, realClock, spec("work-after-agent-end", { settles: true, finalize: "off" }));
  expect(settled.status, taskWhy(settled)).toBe("completed");
  expect(settled.output).toBe("after the automatic work");
  // The same child under the old rule is stopped by the grace after its first agent_end.
  const old = await runChild(host, realClock, spec("work-after-agent-end", { finalize: "off" }));
  expect(old.output).toBe("first pass");
});

test("a child that forgets to finalize is nudged, in the same session, and then succeeds", async () => {
  const state = join(dir, `state-${Date.now()}`);
  const r = await runChild(host, realClock, spec("forget-then-finalize", {}, { FAKE_PI_STATE: state }));
  expect(r.status, taskWhy(r)).toBe("completed");
  expect(r.output).toBe("finalized after nudge");
  expect(r.messages.filter((m) => m.role === "user").length).toBe(2);
  expect(r.messages[2]).toMatchObject({ role: "user" });
  expect((r.messages[2] as { text: string }).text).toContain("subagent_finalize");
});

test("a child that hangs after its last message is stopped after the exit grace, and counts as done", async () => {
  const started = Date.now();
  const r = await runChild(host, realClock, spec("hang-after-end"));
  expect(r.status, taskWhy(r)).toBe("completed");
  expect(r.output).toBe("done but hanging");
  expect(Date.now() - started).toBeLessThan(15_000);
});

test("a child that ignores SIGTERM is killed with SIGKILL after the kill grace", async () => {
  let pid = 0;
  const started = Date.now();
  // A tool is "running" forever and the timeout is far off, so the hard cap (maxRuntime) stops it.
  const r = await runChild(
    host,
    realClock,
    spec("ignore-term", { timeoutSec: 10, extendDebounceSec: 0, maxRuntimeSec: 0.5, onSpawn: (p) => (pid = p) }),
  );
  expect(r.status).toBe("error");
  expect(r.errorCode).toBe("SUBAGENT_TIMEOUT");
  expect(alive(pid)).toBe(false);
  // SIGTERM was ignored: the stop took the kill grace (500 ms) on top of the 500 ms cap.
  expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
});

test("grandchildren (also in their own process group) do not outlive the run", async () => {
  const pids = join(dir, `pids-${Date.now()}`);
  const r = await runChild(host, realClock, spec("grandchild", {}, { FAKE_PI_PIDS: pids }));
  expect(r.status, taskWhy(r)).toBe("completed");
  const [a, b] = readFileSync(pids, "utf8").split(" ").map(Number);
  await Bun.sleep(100);
  expect(alive(a)).toBe(false);
  expect(alive(b)).toBe(false);
});

test("a crash keeps the meaningful stderr: the exception line from the start, its last lines, bounded", async () => {
  const r = await runChild(host, realClock, spec("crash-stack"));
  expect(r.status).toBe("error");
  expect(r.error).toContain("Error: 401 Unauthorized: invalid x-api-key for provider nowhere");
  expect(r.error).toContain("pi exited after the failure above");
  expect(r.error).not.toContain("at frame");
  expect(r.error!.length).toBeLessThan(2000);
});

test("a crash mid-run is an error with the stderr tail in the message", async () => {
  const r = await runChild(host, realClock, spec("crash"));
  expect(r.status).toBe("error");
  expect(r.errorCode).toBe("SUBAGENT_FAILED");
  expect(r.error).toContain("exited with code 1");
  expect(r.error).toContain("fatal: the fake child broke on purpose");
  expect(r.stderrTail).toContain("fatal: the fake child broke on purpose");
});

for (const [mode, limit] of [
  ["flood-fd3", { eventBytes: 2 * 1024 * 1024 }],
  ["flood-stdout", { stdoutBytes: 2 * 1024 * 1024 }],
  ["flood-stderr", { stderrBytes: 2 * 1024 * 1024 }],
] as const) {
  test(`${mode}: the child is stopped at the limit with SUBAGENT_OUTPUT_TRUNCATED, memory stays bounded`, async () => {
    const before = process.memoryUsage().rss;
    const r = await runChild(host, realClock, spec(mode, { limits: limit }));
    expect(r.status).toBe("error");
    expect(r.errorCode).toBe("SUBAGENT_OUTPUT_TRUNCATED");
    expect(r.stderrTail.length).toBeLessThanOrEqual(8 * 1024 + 1);
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
  });
}

test("flood-fd3: an answer stopped at the event limit keeps what it had streamed (its first OUTPUT_CHARS)", async () => {
  const r = await runChild(host, realClock, spec("flood-fd3", { limits: { eventBytes: 2 * 1024 * 1024 } }));
  expect(r.errorCode).toBe("SUBAGENT_OUTPUT_TRUNCATED");
  // The deltas before the stop: nearly the whole 2 MB (not the empty last text of a message that never ended).
  expect(r.output.length).toBeGreaterThan(1_500_000);
  expect(r.output.slice(0, 100)).toBe("x".repeat(100));
});

test("an event line over the 16 MB line limit fails the task with a code, never a quiet completion", async () => {
  const r = await runChild(host, realClock, spec("huge-line", { finalize: "optional" }));
  expect(r.status, taskWhy(r)).toBe("error");
  expect(r.errorCode).toBe("SUBAGENT_OUTPUT_TRUNCATED");
  expect(r.error).toContain("over the 16 MB limit");
});

test("an answer the child cut (a 17 M-character answer): completed, its first 4 M characters kept, the cut said", async () => {
  const r = await runChild(host, realClock, spec("cut-answer", { finalize: "optional" }));
  expect(r.status, taskWhy(r)).toBe("completed");
  expect(r.errorCode).toBe("SUBAGENT_OUTPUT_TRUNCATED");
  expect(r.output.startsWith("z".repeat(4 * 1024 * 1024))).toBe(true);
  expect(r.output.endsWith("\n[output cut at 4194304 characters]")).toBe(true);
  expect(r.warnings).toContain(
    "output cut: the answer had 17,000,000 characters, the first 4,194,304 are kept (SUBAGENT_OUTPUT_TRUNCATED)",
  );
  // Its usage counted (budgets see the turn).
  expect(r.usage.turns).toBe(1);
  expect(r.usage.output).toBe(5);
});

test("a UTF-8 character split across two writes arrives intact", async () => {
  const seen: string[] = [];
  const r = await runChild(
    host,
    realClock,
    spec("utf8-split", { onEvent: (_s, ev) => ev.type === "text" && seen.push(ev.delta) }),
  );
  expect(seen.join("")).toBe("héllo wörld 🙂");
  expect(r.output).toBe("héllo wörld 🙂");
});

test("invalid JSON lines and unknown events are ignored", async () => {
  const r = await runChild(host, realClock, spec("invalid-json"));
  expect(r.status, taskWhy(r)).toBe("completed");
  expect(r.output).toBe("survived garbage");
});

test("a provider error is status error with the provider's message", async () => {
  const r = await runChild(host, realClock, spec("provider-error"));
  expect(r.status).toBe("error");
  expect(r.errorCode).toBe("SUBAGENT_FAILED");
  expect(r.error).toBe("401 invalid api key from the fake provider");
});

test("maxTurns: the wrap-up steer reaches the child first; a turn asking for more tools after it stops the child; without a budget the run completes", async () => {
  const stopped = await runChild(host, realClock, spec("many-turns", { budget: { maxTurns: 2 } }));
  expect(stopped.status, taskWhy(stopped)).toBe("error");
  expect(stopped.errorCode).toBe("BUDGET_EXCEEDED");
  // Told before stopped: the steer is in its conversation (it reached the model at a turn boundary) …
  const told = stopped.messages.findIndex((m) => m.role === "user" && m.text.includes("Stop working now"));
  expect(told, JSON.stringify(stopped.messages.map((m) => m.role))).toBeGreaterThan(0);
  // … and the turn that asked for work after it is the one stopped: the next (3), or the one after when the steer
  // came in after the child had already started its next turn (a busy machine).
  expect(stopped.error).toMatch(/^Budget exceeded: maxTurns \(turns [34]\/2\)$/);
  expect(stopped.usage.turns).toBeLessThan(5); // stopped, not run to the end
  const free = await runChild(host, realClock, spec("many-turns"));
  expect(free.status, taskWhy(free)).toBe("completed");
  expect(free.output).toBe("all turns done");
});

test("maxTurns: a child whose wrap-up steer never reaches its model is still stopped, two turns after the steer", async () => {
  const stopped = await runChild(host, realClock, spec("many-turns-deaf", { budget: { maxTurns: 2 } }));
  expect(stopped.errorCode, taskWhy(stopped)).toBe("BUDGET_EXCEEDED");
  expect(stopped.error).toBe("Budget exceeded: maxTurns (turns 5/2)");
  expect(stopped.messages.some((m) => m.text.includes("Stop working now"))).toBe(false);
});

test("a child whose pi gave up inside a rate limit goes on in its session once the call's hold ends; without a gate it is RATE_LIMITED", async () => {
  const gate = new RateGate(4, realClock);
  const started = Date.now();
  const r = await runChild(host, realClock, spec("rate-limited-once", { rateGate: gate }));
  expect(r.status, taskWhy(r)).toBe("completed");
  expect(r.output).toBe("finished after the limit");
  expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // the Retry-After was waited out
  expect(gate.limit).toBe(2);
  expect(r.messages.filter((m) => m.role === "user").map((m) => m.text)).toEqual(["the task", CONTINUE_TEXT]);
  const alone = await runChild(host, realClock, spec("rate-limited-once"));
  expect(alone.errorCode).toBe("RATE_LIMITED");
  expect(alone.error).toBe("Rate limited: 429 Rate limit reached for requests");
});

test("five identical tool calls in a row: loop detected, child stopped", async () => {
  const r = await runChild(host, realClock, spec("loop"));
  expect(r.errorCode).toBe("LOOP_DETECTED");
  expect(r.error).toBe("Loop detected: sub-agent is repeating the same tool calls");
});

test("loop detection off (looping_tool_count 0) lets identical calls run", async () => {
  const r = await runChild(
    host,
    realClock,
    spec("loop", { loopingToolCount: 0, timeoutSec: 1, extendDebounceSec: 0.3 }),
  );
  expect(r.errorCode).toBe("SUBAGENT_TIMEOUT");
});

test("an idle child times out with the spec's message", async () => {
  const r = await runChild(host, realClock, spec("idle", { timeoutSec: 0.5, extendDebounceSec: 0.2 }));
  expect(r.errorCode).toBe("SUBAGENT_TIMEOUT");
  expect(r.error).toBe("Timed out after 0.5s. Consider resuming with a longer timeout.");
});

test("a child still working past its timeout is not stopped until it goes idle", async () => {
  const r = await runChild(host, realClock, spec("busy-past-timeout", { timeoutSec: 1, extendDebounceSec: 1 }));
  expect(r.status, taskWhy(r)).toBe("completed");
  expect(r.output).toBe("finished after the timeout while busy");
});

test("a tool call still running after the timeout is not activity: stopped after the debounce, the tool is named", async () => {
  // The fake child starts `bash` and never finishes it (a hung dev server). Before, a running tool kept the child
  // alive until maxRuntime (60 s here).
  const started = Date.now();
  const r = await runChild(
    host,
    realClock,
    spec("ignore-term", { timeoutSec: 0.5, extendDebounceSec: 0.5, killGraceMs: 100 }),
  );
  expect(r.errorCode).toBe("SUBAGENT_TIMEOUT");
  expect(r.error).toStartWith("Timed out after 0.5s. Consider resuming with a longer timeout.");
  expect(r.error).toContain('The tool call "bash" had been running for 1s without finishing.');
  expect(Date.now() - started).toBeLessThan(15_000);
});

test("after the timeout only tool calls extend it: streaming text alone does not", async () => {
  const r = await runChild(host, realClock, spec("chatty-past-timeout", { timeoutSec: 0.5, extendDebounceSec: 0.5 }));
  expect(r.errorCode).toBe("SUBAGENT_TIMEOUT");
  expect(r.error).toBe("Timed out after 0.5s. Consider resuming with a longer timeout.");
});

test("maxRuntime is a hard cap even while the child is busy", async () => {
  const r = await runChild(
    host,
    realClock,
    spec("busy-past-timeout", { timeoutSec: 1, extendDebounceSec: 5, maxRuntimeSec: 1.5 }),
  );
  expect(r.errorCode).toBe("SUBAGENT_TIMEOUT");
});

test("an abort stops the child at once with SUBAGENT_CANCELLED", async () => {
  const c = new AbortController();
  let pid = 0;
  setTimeout(() => c.abort(), 300);
  const r = await runChild(host, realClock, spec("idle", { signal: c.signal, onSpawn: (p) => (pid = p) }));
  expect(r.errorCode).toBe("SUBAGENT_CANCELLED");
  expect(alive(pid)).toBe(false);
});

test("a command that cannot be started is SUBAGENT_FAILED, not a throw", async () => {
  const r = await runChild(host, realClock, { ...spec("normal"), argv: [join(dir, "no-such-binary")] });
  expect(r.status).toBe("error");
  expect(r.errorCode).toBe("SUBAGENT_FAILED");
});

test("json transport: deltas, a huge message_update skipped, finalize from tool_execution_*", async () => {
  const deltas: string[] = [];
  const r = await runChild(host, realClock, {
    ...spec("json"),
    argv: [process.execPath, FAKE_JSON],
    transport: "json",
    onEvent: (_s, ev) => ev.type === "text" && deltas.push(ev.delta),
  });
  expect(r.status, taskWhy(r)).toBe("completed");
  expect(r.output).toBe("json transport result");
  expect(deltas.slice(0, 3).join("")).toBe('Hello \\"quoted\\" wörld');
  expect(r.usage.cost).toBeCloseTo(0.002);
});

test("invalid UTF-8 in a child's output is replaced, not fatal", async () => {
  const seen: string[] = [];
  const r = await runChild(
    host,
    realClock,
    spec("bad-utf8", { onEvent: (_s, ev) => ev.type === "text" && seen.push(ev.delta) }),
  );
  expect(r.output).toBe("bad bytes survived");
  expect(seen.join("")).toContain("\uFFFD");
});

test("a child flooding fd 3 without end is stopped at the default 64 MB limit; parent memory stays bounded", async () => {
  const before = process.memoryUsage().rss;
  const r = await runChild(host, realClock, spec("flood-fd3"));
  expect(r.errorCode).toBe("SUBAGENT_OUTPUT_TRUNCATED");
  expect(r.error).toContain("64 MB");
  expect(process.memoryUsage().rss - before).toBeLessThan(150 * 1024 * 1024);
}, 30_000);
