// A long answer is never lost quietly (docs/limits.md "Hard limits"): the scripted model answers 17 M characters,
// past the 16 MB event line, to a real pi child. The run completes with its first 4,194,304 characters, and the cut
// is said in the record, `--json`, the CLI's end lines and pi's tool result; its usage still counts. The same
// through pi's JSON mode (transport "json"), whose own line for the message is cut.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld, summaryOf, taskWhy } from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const KEPT = 4 * 1024 * 1024;
/** An answer of 17,000,000 characters, streamed in 400 parts. */
const huge = (marker: string, chunks = 400) =>
  `${marker} ${script([{ text: "0123456789", repeat: 1_700_000, chunks }])}`;
const CUT =
  "output cut: the answer had 17,000,000 characters, the first 4,194,304 are kept (SUBAGENT_OUTPUT_TRUNCATED)";

test("a 17 M-character answer: completed with its first 4 M characters, the cut in --json, the record and the end lines", async () => {
  const r = await cli(world, ["run", "default", "--json", huge("huge-json")], { binary: true });
  expect(r.code, r.stderr).toBe(0);
  const [task] = summaryOf(r.json);
  expect(task.status, taskWhy(task, r)).toBe("completed");
  expect(task.errorCode).toBe("SUBAGENT_OUTPUT_TRUNCATED");
  expect(task.warnings).toEqual([CUT]);
  expect(task.output.length).toBe(KEPT + "\n[output cut at 4194304 characters]".length);
  expect(task.output.startsWith("0123456789".repeat(1000))).toBe(true);
  // Budgets see it: the turn and its output tokens are counted.
  expect(task.usage.turns).toBe(1);
  expect(task.usage.output).toBeGreaterThan(4_000_000);
  // The record keeps the same.
  const out = await cli(world, ["output", task.sessionId], { binary: true });
  expect(out.stdout.trimEnd().endsWith("[output cut at 4194304 characters]")).toBe(true);
  const session = await cli(world, ["session", task.sessionId], { binary: true });
  expect(session.stdout).toContain(`⚠ ${CUT}`);
  // A person's run says it under the task's end line; here the model sends the answer as one delta of 17 M
  // characters (over the 16 MB event line: the child streams what fits, the answer and its usage still arrive).
  const plain = await cli(world, ["run", "default", huge("huge-plain", 1)], { binary: true });
  expect(plain.code, plain.stderr).toBe(0);
  expect(plain.stderr).toContain(`⚠ ${CUT}`);
}, 180_000);

test("pi's JSON mode (transport json): the message's line is cut at 16 MB, its head is kept and the warning says so", async () => {
  world.setSubagentSettings({ transport: "json" });
  try {
    const r = await cli(world, ["run", "default", "--json", huge("huge-jsonmode")], { binary: true });
    const [task] = summaryOf(r.json);
    expect(task.status, taskWhy(task, r)).toBe("completed");
    expect(task.errorCode).toBe("SUBAGENT_OUTPUT_TRUNCATED");
    expect(task.output.startsWith("0123456789".repeat(1000))).toBe(true);
    expect(task.warnings?.[0]).toMatch(
      /^output cut: the answer had over 16,\d{3},\d{3} characters, the first 4,194,304 are kept \(SUBAGENT_OUTPUT_TRUNCATED\); its message was over the 16 MB line limit of pi's JSON output/,
    );
  } finally {
    world.setSubagentSettings({});
  }
}, 180_000);

test("inside pi: delegate_to_subagents returns the cut said in its text and its window", async () => {
  const r = await runParentPi(world, {
    runtime: "node",
    steps: [
      { tool: "delegate_to_subagents", args: { tasks: [{ name: "big", prompt: huge("huge-pi") }] } },
      { text: "parent done" },
    ],
  });
  expect(r.code, r.stderr).toBe(0);
  const result = r.results.find((x) => x.toolName === "delegate_to_subagents")!;
  expect(result.text).toContain("✓ big: completed");
  expect(result.text).toContain(`  ⚠ ${CUT}`);
  // The window pi renders says it too (details: the windows of the call).
  expect(result.details.windows[0].warnings).toEqual([CUT]);
}, 180_000);
