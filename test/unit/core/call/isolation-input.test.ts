// Where `isolation` can be asked for: the delegate task field, the tool schemas, an agent file's front matter.
import { expect, test } from "bun:test";
import { InputError, parseDelegateParams } from "../../../../src/core/delegate-input.ts";
import { parseProfile, profileSummary } from "../../../../src/core/profiles/profile.ts";
import { DELEGATE_SCHEMA, firstProblem, SCHEMAS } from "../../../../src/core/call/schemas.ts";

test('delegate task field: "worktree" is kept, anything else is refused naming the field', () => {
  const p = parseDelegateParams({
    tasks: [
      { name: "a", prompt: "x", isolation: "worktree" },
      { name: "b", prompt: "y" },
    ],
  });
  expect(p.tasks.map((t) => t.isolation)).toEqual(["worktree", undefined]);
  expect(() => parseDelegateParams({ tasks: [{ name: "a", prompt: "x", isolation: "docker" }] })).toThrow(
    new InputError('tasks[0].isolation must be "worktree" (got "docker")'),
  );
  expect(() => parseDelegateParams({ tasks: [{ name: "a", prompt: "x", isolation: true }] })).toThrow(
    'tasks[0].isolation must be "worktree"',
  );
});

test("tool schemas carry one terse isolation property in each of the two tools", () => {
  const task = (DELEGATE_SCHEMA as any).properties.tasks.items.properties.isolation;
  expect(task).toMatchObject({ const: "worktree", type: "string" });
  expect(task.description.split(" ").length).toBeLessThanOrEqual(8);
  expect(firstProblem(SCHEMAS.subagent, { agent: "a", task: "t", isolation: "worktree" })).toBeNull();
  expect(firstProblem(SCHEMAS.subagent, { agent: "a", task: "t", isolation: "vm" })).toStartWith("isolation:");
});

test("agent file: Claude Code's `isolation: worktree` is honoured, not warned about; another value is reported", () => {
  const file = (v: string) => `---\nname: fixer\ndescription: fixes\nisolation: ${v}\n---\nFix things.\n`;
  const ok = parseProfile(file("worktree"), "/a/fixer.md", "user").profile!;
  expect(ok.isolation).toBe("worktree");
  expect(ok.warnings).toBeUndefined();
  expect(profileSummary(ok)).toContain("isolation worktree");
  const odd = parseProfile(file("sandbox"), "/a/fixer.md", "user").profile!;
  expect(odd.isolation).toBeUndefined();
  expect(odd.warnings).toEqual(['isolation must be "worktree" (got string "sandbox"; ignored)']);
});
