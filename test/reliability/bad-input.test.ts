// Bad input: generated parameters for every tool (1,000+ cases each), the CLI's --tasks JSON, and awkward task
// texts. Nothing may crash; every rejection must say which field is wrong.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { InputError, parseDelegateParams } from "../../src/core/delegate-input.ts";
import { firstProblem, SCHEMAS } from "../../src/core/call/schemas.ts";
import { script } from "../../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld } from "../support/pi-env.ts";

/** Small deterministic PRNG so a failure can be reproduced from its case number. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function value(r: () => number, depth = 0): unknown {
  const pick = Math.floor(r() * 16);
  switch (pick) {
    case 0:
      return undefined;
    case 1:
      return null;
    case 2:
      return Math.floor(r() * 2000) - 1000;
    case 3:
      return Number.NaN;
    case 4:
      return "";
    case 5:
      return "x".repeat(Math.floor(r() * 200_000));
    case 6:
      return "\u0000\u0007\u001b[2J\r\n";
    case 7:
      return "../../etc";
    case 8:
      return "relative/dir";
    case 9:
      return "/tmp/../etc";
    case 10:
      return r() < 0.5;
    case 11:
      return depth > 2 ? [] : Array.from({ length: Math.floor(r() * 20) }, () => value(r, depth + 1));
    case 12:
      return depth > 2
        ? {}
        : {
            path: value(r, depth + 1),
            head: value(r, depth + 1),
            tail: value(r, depth + 1),
            start: value(r, depth + 1),
          };
    case 13:
      return "600";
    case 14:
      return "/tmp";
    default:
      return "ok text";
  }
}

function task(r: () => number): unknown {
  const t: Record<string, unknown> = {};
  for (const k of ["name", "prompt", "cwd", "profile", "timeout", "resume", "files"]) if (r() < 0.6) t[k] = value(r);
  if (r() < 0.1) t.unknownField = 1;
  if (r() < 0.5) {
    t.name = "n";
    t.prompt = "p";
  }
  return r() < 0.05 ? value(r) : t;
}

const FIELD = /^(parameters|tasks|profile|[a-zA-Z]+ is not a known parameter|two tasks)/;

test("delegate_to_subagents: 2,000 generated parameter sets — valid or a clear error naming the field", () => {
  const r = rng(42);
  let accepted = 0;
  for (let i = 0; i < 2000; i++) {
    const n = r() < 0.05 ? 17 : Math.floor(r() * 5);
    const params =
      r() < 0.03
        ? value(r)
        : { tasks: Array.from({ length: n }, () => task(r)), ...(r() < 0.3 ? { profile: value(r) } : {}) };
    try {
      const p = parseDelegateParams(params);
      accepted++;
      for (const t of p.tasks) {
        expect(typeof t.name === "string" && t.name.trim().length > 0, `case ${i}`).toBe(true);
        if (t.cwd !== undefined)
          expect(t.cwd.startsWith("/") && !t.cwd.split("/").includes(".."), `case ${i}`).toBe(true);
        if (t.timeout !== undefined) expect(t.timeout >= 1, `case ${i}`).toBe(true);
      }
      expect(p.tasks.length >= 1 && p.tasks.length <= 16, `case ${i}`).toBe(true);
    } catch (err) {
      expect(err, `case ${i}: ${(err as Error).message}`).toBeInstanceOf(InputError);
      expect((err as Error).message, `case ${i}`).toMatch(FIELD);
    }
  }
  expect(accepted).toBeGreaterThan(5); // some generated sets are valid, so acceptance is exercised too
});

for (const [name, schema, make] of [
  [
    "subagent",
    SCHEMAS.subagent,
    (r: () => number) => ({
      agent: value(r),
      task: value(r),
      ...(r() < 0.5 ? { sessionId: value(r) } : {}),
      ...(r() < 0.1 ? { extra: 1 } : {}),
    }),
  ],
  [
    "get_subagent_output / get_subagent_session",
    SCHEMAS.sessionId,
    (r: () => number) => ({ sessionId: value(r), ...(r() < 0.1 ? { extra: 1 } : {}) }),
  ],
] as const) {
  test(`${name}: 1,000 generated parameter sets — accepted or a problem naming the field`, () => {
    const r = rng(7);
    for (let i = 0; i < 1000; i++) {
      const params = r() < 0.05 ? value(r) : make(r);
      const problem = firstProblem(schema, params);
      if (problem !== null) expect(problem, `case ${i}`).toMatch(/^(parameters|agent|task|sessionId|extra)\b/);
    }
  });
}

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

test("the CLI's --tasks JSON: broken input is exit 2 naming the field", async () => {
  const cases: [unknown, string][] = [
    [{ tasks: "nope" }, "tasks must be an array"],
    [{ tasks: [{ name: "a" }] }, "tasks[0].prompt is required"],
    [{ tasks: [{ name: "a", prompt: "p", cwd: "../x" }] }, "tasks[0].cwd: cwd must be an absolute path"],
    [{ tasks: [{ name: "a", prompt: "p", files: [{ head: 3 }] }] }, "tasks[0].files[0].path is required"],
    [{ tasks: Array.from({ length: 17 }, (_, i) => ({ name: `t${i}`, prompt: "p" })) }, "at most 16 tasks"],
  ];
  for (const [body, message] of cases) {
    const file = join(world.root, `bad-${Math.random().toString(16).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(body));
    const r = await cli(world, ["delegate", "--tasks", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  }
  const notJson = join(world.root, "not.json");
  writeFileSync(notJson, "{ tasks: [");
  const r = await cli(world, ["delegate", "--tasks", notJson]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("is not valid JSON");
}, 60_000);

test("task texts of 1 MB, starting with '-' or '---', reach the child intact", async () => {
  const big = `${"a".repeat(1024 * 1024)} END-OF-BIG`;
  const r1 = await cli(world, ["run", "default", "-", "--json"], { stdin: big });
  expect(r1.json.at(-1)!.tasks[0].status).toBe("completed");
  expect(world.server.requests.some((q) => JSON.stringify(q.messages).includes("END-OF-BIG"))).toBe(true);
  const dash = `-rf looks like a flag ${script([{ finalize: { status: "SUCCESS", result: "dash ok" } }])}`;
  const r2 = await cli(world, ["run", "default", "--json", "--", dash]);
  expect(r2.json.at(-1)!.tasks[0].output).toBe("dash ok");
  const fm = `---\ntitle: not front matter\n---\n${script([{ finalize: { status: "SUCCESS", result: "fm ok" } }])}`;
  const r3 = await cli(world, ["delegate", "--json", "--", fm]);
  expect(r3.json.at(-1)!.tasks[0].output).toBe("fm ok");
}, 60_000);
