// Acceptance gates end to end: real pi children against the scripted model server; the gate is a real shell
// command in the task's folder, and its failure goes back to the same child as a correction.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { messageText, script } from "../../../src/scripted/model-server.ts";
import { cli, piCmd, piWorld, type PiWorld, summaryOf, taskWhy } from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const allTexts = () => world.server.requests.flatMap((r) => (r.messages ?? []).map(messageText));
const dir = (name: string) => {
  const d = join(world.root, name);
  mkdirSync(d, { recursive: true });
  return d;
};
const CHECK = 'test -f done.txt || { echo "done.txt is missing GATE-MARK-1"; exit 3; }';

test("a gate that fails once then passes: the same child gets the correction, fixes it, and completes", async () => {
  const cwd = dir("gate-once");
  const prompt = `make done.txt ${script([
    { finalize: { status: "SUCCESS", result: "claimed done" } },
    { tool: "bash", args: { command: "touch done.txt" } },
    { finalize: { status: "SUCCESS", result: "really done" } },
  ])}`;
  const r = await cli(world, ["delegate", prompt, "--gate", CHECK, "--cwd", cwd, "--json"]);
  expect(r.stderr).not.toContain("error:");
  expect(r.code).toBe(0);
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t)).toBe("completed");
  expect(t.output).toBe("really done");
  expect(t.gate).toEqual({ passed: true, attempts: 2 });
  expect(r.json.find((e) => e.type === "task_end")?.gate).toEqual({ passed: true, attempts: 2 });
  // The correction reached the model in the same conversation, as the finalize call's error result.
  const correction = allTexts().find((x) => x.includes("The acceptance check"));
  expect(correction).toContain("exited with code 3 (attempt 1 of 3)");
  expect(correction).toContain("done.txt is missing GATE-MARK-1");
  // One child process: the session shows both attempts in its transcript.
  const shown = await cli(world, ["session", t.sessionId]);
  expect(shown.stdout).toContain("GATE-MARK-1");
}, 90_000);

test("run takes the same gate flags: a failing check goes back to the child, which fixes it", async () => {
  const cwd = dir("gate-run");
  const prompt = `run gate ${script([{ text: "all done" }, { tool: "bash", args: { command: "touch done.txt" } }, { text: "fixed by run" }])}`;
  const r = await cli(world, [
    "run",
    "default",
    prompt,
    "--gate",
    CHECK,
    "--gate-retries",
    "1",
    "--cwd",
    cwd,
    "--json",
  ]);
  expect(r.code, r.stderr).toBe(0);
  const [t] = summaryOf(r.json);
  expect(t.output).toBe("fixed by run");
  expect(t.gate).toEqual({ passed: true, attempts: 2 });
  const bad = await cli(world, ["run", "default", "x", "--gate", CHECK, "--gate-retries", "-1"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('run: --gate-retries must be a whole number ≥ 0 (got "-1")');
}, 90_000);

test("a plain final answer is gated too (optional finalize): correction as a follow-up, then it passes", async () => {
  const cwd = dir("gate-plain");
  const prompt = `plain ${script([{ text: "all done" }, { tool: "bash", args: { command: "touch done.txt" } }, { text: "fixed now" }])}`;
  const r = await cli(world, ["delegate", prompt, "--gate", CHECK, "--cwd", cwd, "--json"]);
  expect(r.code).toBe(0);
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t)).toBe("completed");
  expect(t.output).toBe("fixed now");
  expect(t.gate).toEqual({ passed: true, attempts: 2 });
  expect(allTexts().some((x) => x.startsWith("The acceptance check") && x.includes("then finish again"))).toBe(true);
}, 90_000);

test("a gate that never passes ends GATE_FAILED after gateRetries corrections (task field, --tasks)", async () => {
  const cwd = dir("gate-never");
  const file = join(world.root, "gate-never.json");
  writeFileSync(
    file,
    JSON.stringify({
      tasks: [
        {
          name: "stubborn",
          cwd,
          gate: 'echo "still broken GATE-MARK-2"; exit 1',
          gateRetries: 1,
          prompt: `try ${script([{ finalize: { status: "SUCCESS", result: "one" } }, { finalize: { status: "SUCCESS", result: "two" } }, { finalize: { status: "SUCCESS", result: "three" } }])}`,
        },
        { name: "reviewer", after: ["stubborn"], prompt: "review {{stubborn}}" },
      ],
    }),
  );
  const r = await cli(world, ["delegate", "--tasks", file, "--json"]);
  expect(r.code).toBe(1);
  const [t, after] = summaryOf(r.json);
  expect(t.status).toBe("error");
  expect(t.errorCode).toBe("GATE_FAILED");
  expect(t.error).toContain("Acceptance check failed after 2 attempts");
  expect(t.error).toContain("still broken GATE-MARK-2");
  expect(t.gate).toEqual({ passed: false, attempts: 2 });
  expect(after.status).toBe("skipped");
}, 90_000);

test("a gate that hangs is stopped at gateTimeout with its whole process group", async () => {
  const cwd = dir("gate-hang");
  const marker = `${31 + Math.floor(Math.random() * 100)}.${Date.now() % 1000}`;
  const prompt = `hang ${script([{ finalize: { status: "SUCCESS", result: "x" } }, { finalize: { status: "SUCCESS", result: "y" } }])}`;
  const r = await cli(world, [
    "delegate",
    prompt,
    "--gate",
    `sleep ${marker} & sleep ${marker}`,
    "--gate-timeout",
    "1",
    "--gate-retries",
    "0",
    "--cwd",
    cwd,
    "--json",
  ]);
  expect(r.code).toBe(1);
  const [t] = summaryOf(r.json);
  expect(t.errorCode).toBe("GATE_FAILED");
  expect(t.error).toContain("did not finish within 1s");
  await Bun.sleep(500);
  const left = spawnSync("pgrep", ["-f", `sleep ${marker}`], { encoding: "utf8" }).stdout.trim();
  expect(left).toBe("");
}, 90_000);

test("a gate on a missing folder is refused before anything starts", async () => {
  const before = world.server.requests.length;
  const file = join(world.root, "gate-nofolder.json");
  writeFileSync(
    file,
    JSON.stringify({ tasks: [{ name: "t", cwd: join(world.root, "no-such-dir"), gate: "true", prompt: "x" }] }),
  );
  const r = await cli(world, ["delegate", "--tasks", file]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('task "t": its gate `true` would run in');
  expect(world.server.requests.length).toBe(before);
}, 30_000);

test("delegate_to_subagents in a parent pi: gate field, details carry gate {passed, attempts}", async () => {
  const cwd = dir("gate-parent");
  const r = await runParentPi(world, {
    runtime: "bun",
    steps: [
      {
        tool: "delegate_to_subagents",
        args: {
          tasks: [
            {
              name: "fixer",
              cwd,
              gate: CHECK,
              prompt: `fix ${script([{ finalize: { status: "SUCCESS", result: "first" } }, { tool: "bash", args: { command: "touch done.txt" } }, { finalize: { status: "SUCCESS", result: "PARENT-GATED-OK" } }])}`,
            },
          ],
        },
      },
      { text: "parent done" },
    ],
  });
  expect(r.code, r.stderr).toBe(0);
  const [res] = r.results;
  expect(res.text).toMatch(/^✓ fixer: completed/);
  expect(res.text).toContain("PARENT-GATED-OK");
  expect(res.details.windows[0].gate).toEqual({ passed: true, attempts: 2 });
  expect(res.details.windows[0].lines.join("\n")).toContain("✓ gate passed");
}, 90_000);

for (const [label, release] of [
  ["pi 1.x under Node 24", "current"],
  ["old pi 0.73.1 under Node", "old"],
] as const) {
  test(`gate correction with ${label} as the child`, async () => {
    const cwd = dir(`gate-${release}-node`);
    const prompt = `node child ${script([{ finalize: { status: "SUCCESS", result: "early" } }, { tool: "bash", args: { command: "touch done.txt" } }, { finalize: { status: "SUCCESS", result: `NODE-${release}-OK` } }])}`;
    const r = await cli(world, ["delegate", prompt, "--gate", CHECK, "--cwd", cwd, "--json"], {
      env: { SUBAGENTS_PI: piCmd(release, "node").join(" ") },
    });
    expect(r.code, r.stderr).toBe(0);
    const [t] = summaryOf(r.json);
    expect(t.output).toBe(`NODE-${release}-OK`);
    expect(t.gate).toEqual({ passed: true, attempts: 2 });
  }, 90_000);
}
