// delegate_to_subagents parameter validation: accepted shapes, and rejections that name the field.
import { expect, test } from "bun:test";
import { InputError, parseDelegateParams } from "../../../../src/core/delegate-input.ts";

const ok = (v: unknown) => parseDelegateParams(v);
const bad = (v: unknown) => {
  try {
    parseDelegateParams(v);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as Error).message;
  }
  throw new Error("expected a rejection");
};

test("accepts every task field and every form of a files entry", () => {
  const p = ok({
    profile: "researcher",
    tasks: [
      {
        name: "a",
        prompt: "do a",
        cwd: "/tmp",
        profile: "writer",
        timeout: 900,
        resume: "a3f7b9c2d1e8f4a1",
        files: [
          "src/main.ts",
          { path: "x.ts", start: 10, end: 50 },
          { path: "y.ts", head: 20 },
          { path: "z.ts", tail: 30 },
          { path: "w.ts", start: 5 },
        ],
      },
    ],
  });
  expect(p.profile).toBe("researcher");
  expect(p.tasks[0].files).toEqual([
    "src/main.ts",
    { path: "x.ts", start: 10, end: 50 },
    { path: "y.ts", head: 20 },
    { path: "z.ts", tail: 30 },
    { path: "w.ts", start: 5 },
  ]);
});

test("a number sent as a string is coerced, a non-number is refused naming the field", () => {
  expect(ok({ tasks: [{ name: "a", prompt: "p", timeout: "600" }] }).tasks[0].timeout).toBe(600);
  expect(bad({ tasks: [{ name: "a", prompt: "p", timeout: "soon" }] })).toContain("tasks[0].timeout must be a number");
  expect(bad({ tasks: [{ name: "a", prompt: "p", timeout: 0 }] })).toContain("tasks[0].timeout must be ≥ 1");
});

test("rejections name the field", () => {
  expect(bad({})).toContain("tasks must be an array");
  expect(bad({ tasks: [] })).toContain("at least one task");
  expect(bad({ tasks: Array.from({ length: 17 }, (_, i) => ({ name: `t${i}`, prompt: "p" })) })).toContain(
    "at most 16 tasks",
  );
  expect(bad({ tasks: [{ prompt: "p" }] })).toBe("tasks[0].name is required");
  expect(bad({ tasks: [{ name: "a", prompt: 5 }] })).toContain("tasks[0].prompt must be a string");
  expect(bad({ tasks: [{ name: "a", prompt: "p", cwd: "rel/dir" }] })).toBe(
    "tasks[0].cwd: cwd must be an absolute path",
  );
  expect(bad({ tasks: [{ name: "a", prompt: "p", cwd: "/a/../b" }] })).toBe(
    "tasks[0].cwd: cwd must not contain '..' path segments",
  );
  expect(bad({ tasks: [{ name: "a", prompt: "p", files: [{ path: "x", head: 0 }] }] })).toContain(
    "tasks[0].files[0].head must be ≥ 1",
  );
  expect(bad({ tasks: [{ name: "a", prompt: "p", files: [{ path: "x", head: 2, tail: 3 }] }] })).toContain(
    "use only one of",
  );
  expect(bad({ tasks: [{ name: "a", prompt: "p", colour: "red" }] })).toContain("tasks[0].colour is not a known field");
  expect(bad({ tasks: [{ name: "a", prompt: "p" }], extra: 1 })).toContain("extra is not a known parameter");
});
