// The finalize contract end to end with the REAL pi and the scripted model: a plain final answer is the result on
// the delegate paths, subagent_finalize wins when called, and the strict contract corrects
// a child inside its own process (pi follow-ups) instead of starting a new one per corrective message.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { NUDGE_TEXT, type FinalizeMode } from "../../../src/core/run/process/finalize-contract.ts";
import { script, type ScriptStep } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld, summaryOf } from "../../support/pi-env.ts";
import { runRealChild } from "../../support/real-child.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

describe("the delegate paths accept a plain final answer", () => {
  test("run: completed with the answer, finalized false, exit 0, no corrective message", async () => {
    world.setSubagentSettings({});
    const before = world.server.requests.length;
    const r = await cli(world, ["run", "default", `plain ${script([{ text: "the plain answer 4711" }])}`, "--json"]);
    expect(r.code).toBe(0);
    const [t] = summaryOf(r.json);
    expect(t).toMatchObject({ status: "completed", output: "the plain answer 4711", finalized: false });
    expect(r.json.find((e) => e.type === "task_end")).toMatchObject({ status: "completed", finalized: false });
    // One model call: nobody asked the child to repeat itself.
    expect(world.server.requests.length - before).toBe(1);
    const out = await cli(world, ["output", t.sessionId]);
    expect(out.stdout.trim()).toBe("the plain answer 4711");
  }, 60_000);

  test("delegate: every task completed with its own plain answer", async () => {
    const r = await cli(world, [
      "delegate",
      `one ${script([{ text: "answer one" }])}`,
      `two ${script([{ text: "answer two" }])}`,
      "--json",
    ]);
    expect(r.code).toBe(0);
    const tasks = summaryOf(r.json);
    expect(tasks.map((t) => [t.status, t.output, t.finalized])).toEqual([
      ["completed", "answer one", false],
      ["completed", "answer two", false],
    ]);
  }, 60_000);

  test("subagent_finalize still wins when the child calls it", async () => {
    const ok = await cli(world, [
      "run",
      "default",
      `fin ${script([{ text: "here is some text too", finalize: { status: "SUCCESS", result: "the finalized one" } }])}`,
      "--json",
    ]);
    expect(summaryOf(ok.json)[0]).toMatchObject({ status: "completed", output: "the finalized one", finalized: true });
    const bad = await cli(world, [
      "run",
      "default",
      `fin ${script([{ finalize: { status: "ERROR", error: "could not do it", result: "half" } }])}`,
      "--json",
    ]);
    expect(bad.code).toBe(1);
    expect(summaryOf(bad.json)[0]).toMatchObject({
      status: "error",
      error: "could not do it",
      output: "half",
      finalized: true,
    });
  }, 60_000);

  test("settings finalize: true asks for the strict contract: FINALIZE_MISSING keeps the text from before the first nudge", async () => {
    world.setSubagentSettings({ finalize: true });
    try {
      const r = await cli(world, [
        "run",
        "default",
        `strict ${script([{ text: "the real answer" }, { text: "OK." }, { text: "OK." }])}`,
        "--json",
      ]);
      expect(r.code).toBe(1);
      const [t] = summaryOf(r.json);
      expect(t).toMatchObject({
        status: "error",
        errorCode: "FINALIZE_MISSING",
        output: "the real answer",
        finalized: false,
      });
    } finally {
      world.setSubagentSettings({});
    }
  }, 60_000);
});

const CASES = [
  ["current", "compact"],
  ["current", "json"],
  ["old", "compact"],
  ["old", "json"],
] as const;

for (const [release, transport] of CASES) {
  const runReal = (steps: ScriptStep[], finalize: FinalizeMode) =>
    runRealChild(world, steps, { finalize, transport, release });
  describe(`strict contract, ${release} pi, ${transport} transport`, () => {
    test("corrective messages are delivered inside the running child: one process, two nudges, then FINALIZE_MISSING", async () => {
      const { result, spawns } = await runReal(
        [{ text: "draft one" }, { text: "OK." }, { text: "OK again." }],
        "required",
      );
      expect(spawns).toBe(1);
      expect(result.errorCode).toBe("FINALIZE_MISSING");
      expect(result.error).toBe("Sub-agent stopped without calling subagent_finalize (after 2 corrective messages)");
      expect(result.output).toBe("draft one");
      expect(result.finalized).toBe(false);
      expect(result.messages.filter((m) => m.role === "user" && m.text === NUDGE_TEXT)).toHaveLength(2);
    }, 60_000);

    test("a child that forgets once finalizes after one corrective message, in the same process", async () => {
      const { result, spawns } = await runReal(
        [{ text: "I am done." }, { finalize: { status: "SUCCESS", result: "late but finalized" } }],
        "required",
      );
      expect(spawns).toBe(1);
      expect(result).toMatchObject({ status: "completed", output: "late but finalized", finalized: true });
      expect(result.messages.filter((m) => m.role === "user" && m.text === NUDGE_TEXT)).toHaveLength(1);
    }, 60_000);
  });
}
