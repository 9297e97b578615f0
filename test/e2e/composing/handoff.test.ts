// Hand-offs (`after` + `{{name}}`) end to end: real pi children against the scripted model server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { messageText, script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld, summaryOf, taskWhy, userTexts as userTextsOf } from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";
import { withoutTeamNote } from "../../../src/core/team.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const userTexts = () => userTextsOf(world);

test("scout → implement: the implementer waits for the scout and gets its output through {{scout}} (YAML --tasks)", async () => {
  const file = join(world.root, "chain.yaml");
  writeFileSync(
    file,
    [
      "tasks:",
      "  - name: implement",
      "    after: [scout]",
      `    prompt: 'implement from the notes: {{scout}}'`,
      "  - name: scout",
      `    prompt: '${`scout the code ${script([{ delayMs: 300, finalize: { status: "SUCCESS", result: "FINDING-7781 in src/a.ts" } }])}`}'`,
      "  - name: side",
      `    prompt: '${`independent ${script([{ delayMs: 300, finalize: { status: "SUCCESS", result: "side done" } }])}`}'`,
    ].join("\n"),
  );
  const r = await cli(world, ["delegate", "--tasks", file, "--json", "--concurrency", "2"]);
  expect(r.stderr).not.toContain("error:");
  expect(r.code).toBe(0);
  const [implement, scout, side] = summaryOf(r.json);
  expect(scout.output).toBe("FINDING-7781 in src/a.ts");
  expect(side.output).toBe("side done");
  expect(implement.status, taskWhy(implement)).toBe("completed");
  // The implementer's child was asked with the scout's output in place of {{scout}}.
  expect(userTexts()).toContain("implement from the notes: FINDING-7781 in src/a.ts");
  // Independent tasks ran side by side; the dependent started only after its dependency ended.
  const order = r.json
    .filter((e) => e.type === "task_start" || e.type === "task_end")
    .map((e) => `${e.type}:${e.task}`);
  expect(order.slice(0, 2).sort()).toEqual(["task_start:scout", "task_start:side"]);
  expect(order.indexOf("task_start:implement")).toBeGreaterThan(order.indexOf("task_end:scout"));
}, 90_000);

test("a dependent of a failed task is skipped: never started, recorded, exit 1", async () => {
  const file = join(world.root, "skip.json");
  writeFileSync(
    file,
    JSON.stringify({
      tasks: [
        { name: "scout", prompt: `fails ${script([{ status: 400, message: "scripted refusal 4410" }])}` },
        { name: "fix", after: ["scout"], prompt: "fix what {{scout}} found MARK-SKIPPED-9" },
        { name: "then", after: ["fix"], prompt: "after the fix MARK-SKIPPED-10" },
      ],
    }),
  );
  const r = await cli(world, ["delegate", "--tasks", file, "--json"]);
  expect(r.code).toBe(1);
  const [scout, fix, then] = summaryOf(r.json);
  expect(scout.status).toBe("error");
  expect(fix.status).toBe("skipped");
  expect(fix.errorCode).toBe("SKIPPED");
  expect(fix.error).toBe('skipped: "scout" did not complete');
  expect(then.status).toBe("skipped");
  expect(then.error).toBe('skipped: "fix" did not complete');
  expect(r.json.some((e) => e.type === "task_start" && e.task !== "scout")).toBe(false);
  expect(userTexts().some((t) => t.includes("MARK-SKIPPED"))).toBe(false);
  const shown = await cli(world, ["session", fix.sessionId]);
  expect(shown.stdout).toContain("skipped");
  // Plain output gives the skipped task its own line.
  const plain = await cli(world, ["delegate", "--tasks", file]);
  expect(plain.stdout).toMatch(/↷ fix .*skipped/);
  expect(plain.stdout).toContain("2 skipped");
}, 90_000);

test("bad graphs are refused before anything starts, naming the tasks (exit 2)", async () => {
  const cases: [unknown[], string][] = [
    [
      [
        { name: "a", prompt: "x", after: ["b"] },
        { name: "b", prompt: "y", after: ["a"] },
      ],
      "cycle: a → b → a",
    ],
    [[{ name: "a", prompt: "x", after: ["a"] }], 'tasks[0] ("a") lists itself'],
    [[{ name: "a", prompt: "x", after: ["ghost"] }], '"ghost", which is not a task of this call'],
    [
      [
        { name: "a", prompt: "x" },
        { name: "b", prompt: "use {{a}}" },
      ],
      'tasks[1] ("b").prompt uses {{a}} but "a" is not in its "after"',
    ],
    [
      [
        { name: "a", prompt: "x" },
        { name: "a", prompt: "y", after: [] },
        { name: "c", prompt: "z", after: ["a"] },
      ],
      'two tasks are named "a"',
    ],
  ];
  const before = world.server.requests.length;
  for (const [tasks, want] of cases) {
    const file = join(world.root, "bad-graph.json");
    writeFileSync(file, JSON.stringify({ tasks }));
    const r = await cli(world, ["delegate", "--tasks", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(want);
  }
  expect(world.server.requests.length).toBe(before);
}, 60_000);

test("delegate_to_subagents in a parent pi: after + {{name}}, a skipped task in the result and windows", async () => {
  const r = await runParentPi(world, {
    runtime: "bun",
    steps: [
      {
        tool: "delegate_to_subagents",
        args: {
          tasks: [
            { name: "review", after: ["scout"], prompt: "review this: {{scout}}" },
            {
              name: "scout",
              prompt: `look ${script([{ finalize: { status: "SUCCESS", result: "PARENT-FINDING-55" } }])}`,
            },
            { name: "broken", prompt: `fails ${script([{ status: 400, message: "scripted refusal 3310" }])}` },
            { name: "after-broken", after: ["broken"], prompt: "never MARK-PARENT-SKIP" },
          ],
        },
      },
      { text: "parent done" },
    ],
  });
  expect(r.code, r.stderr).toBe(0);
  const [res] = r.results;
  expect(res.isError).toBe(false);
  expect(res.text).toMatch(/^✓ review: completed/);
  expect(res.text).toContain("Done: review this: PARENT-FINDING-55");
  expect(res.text).toMatch(/↷ after-broken: skipped: "broken" did not complete/);
  expect(res.details.windows.map((w: { status: string }) => w.status)).toEqual([
    "completed",
    "completed",
    "error",
    "skipped",
  ]);
  expect(res.details.windows[0].after).toEqual(["scout"]);
  expect(userTexts().some((t) => t.startsWith("never MARK-PARENT-SKIP"))).toBe(false);
}, 90_000);

test("a cycle in delegate_to_subagents is refused as a tool error before any child starts", async () => {
  const before = world.server.requests.length;
  const r = await runParentPi(world, {
    runtime: "bun",
    steps: [
      {
        tool: "delegate_to_subagents",
        args: {
          tasks: [
            { name: "a", prompt: "x", after: ["b"] },
            { name: "b", prompt: "y", after: ["a"] },
          ],
        },
      },
      { text: "parent done" },
    ],
  });
  const [res] = r.results;
  expect(res.isError).toBe(true);
  expect(res.text).toContain("tasks wait for each other in a cycle: a → b → a");
  // Only the parent's own two model calls reached the server.
  expect(world.server.requests.length - before).toBe(2);
}, 60_000);

test("a background run keeps the order: the dependent runs after its dependency, with its output", async () => {
  const file = join(world.root, "bg-chain.json");
  writeFileSync(
    file,
    JSON.stringify({
      tasks: [
        { name: "second", after: ["first"], prompt: "continue from {{first}}" },
        {
          name: "first",
          prompt: `begin ${script([{ delayMs: 200, finalize: { status: "SUCCESS", result: "BG-FIRST-31" } }])}`,
        },
      ],
    }),
  );
  const r = await cli(world, ["delegate", "--tasks", file, "--background", "--json"]);
  expect(r.code).toBe(0);
  const ids = summaryOf(r.json).map((t) => t.sessionId);
  const w = await cli(world, ["wait", ...ids, "--json"]);
  expect(w.code).toBe(0);
  expect(userTexts()).toContain("continue from BG-FIRST-31");
}, 90_000);

test("a resumed session can wait for a task of the call and get its output", async () => {
  const first = await cli(world, [
    "delegate",
    `RESUME-BASE-1 ${script([{ finalize: { status: "SUCCESS", result: "base done" } }])}`,
    "--json",
  ]);
  const id = summaryOf(first.json)[0].sessionId;
  const file = join(world.root, "resume-after.json");
  writeFileSync(
    file,
    JSON.stringify({
      tasks: [
        { name: "continue", resume: id, after: ["fresh"], prompt: "RESUME-NEXT with {{fresh}}" },
        { name: "fresh", prompt: `new ${script([{ finalize: { status: "SUCCESS", result: "FRESH-OUT-8" } }])}` },
      ],
    }),
  );
  const r = await cli(world, ["delegate", "--tasks", file, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  const [cont] = summaryOf(r.json);
  expect(cont.sessionId).toBe(id);
  // The resumed child got its old conversation and the filled-in prompt.
  const req = world.server.requests.find((q) =>
    (q.messages ?? []).some(
      (m) => m.role === "user" && withoutTeamNote(messageText(m)) === "RESUME-NEXT with FRESH-OUT-8",
    ),
  );
  expect(req).toBeDefined();
  expect((req!.messages ?? []).some((m) => m.role === "user" && messageText(m).startsWith("RESUME-BASE-1"))).toBe(true);
}, 90_000);

test("while a call runs, `sessions --running` shows a waiting task with what it waits for", async () => {
  const file = join(world.root, "waiting.json");
  writeFileSync(
    file,
    JSON.stringify({
      tasks: [
        {
          name: "slow",
          prompt: `slow ${script([{ delayMs: 2500, finalize: { status: "SUCCESS", result: "slow done" } }])}`,
        },
        { name: "waiter", after: ["slow"], prompt: "after {{slow}}" },
      ],
    }),
  );
  const run = cli(world, ["delegate", "--tasks", file, "--json"]);
  let seen = "";
  for (let i = 0; i < 40 && !seen.includes("(after slow)"); i++) {
    await Bun.sleep(150);
    seen = (await cli(world, ["sessions", "--running"])).stdout;
  }
  expect(seen).toMatch(/queued .*waiter \(after slow\)/);
  expect((await run).code).toBe(0);
}, 90_000);
