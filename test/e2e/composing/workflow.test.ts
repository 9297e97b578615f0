// Saved workflows end to end: `subagents flow` and `delegate_to_subagents {workflow}` with real pi children
// against the scripted model server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld, summaryOf, taskWhy, userTexts as userTextsOf } from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";

let world: PiWorld;
let project: string;
beforeAll(async () => {
  world = await piWorld();
  project = join(world.workDir, "proj");
  mkdirSync(join(project, ".pi", "workflows"), { recursive: true });
  mkdirSync(join(project, "src"), { recursive: true });
  writeFileSync(
    join(project, ".pi", "workflows", "scout-fix.yaml"),
    [
      "description: scout, then fix with what the scout found",
      "tasks:",
      "  - name: scout",
      `    prompt: 'WF-SCOUT look for {{input}} ${script([{ finalize: { status: "SUCCESS", result: "WF-FOUND-12" } }])}'`,
      "  - name: fix",
      "    after: [scout]",
      "    prompt: 'WF-FIX {{input}} using {{scout}}'",
    ].join("\n"),
  );
  mkdirSync(join(world.agentDir, "workflows"), { recursive: true });
  writeFileSync(
    join(world.agentDir, "workflows", "mine.json"),
    JSON.stringify({ tasks: [{ name: "only", prompt: "WF-USER {{input}}" }] }),
  );
});
afterAll(async () => {
  await world.close();
});

const userTexts = () => userTextsOf(world);

test("subagents flow NAME input: {{input}} filled, hand-offs run, delegate options apply", async () => {
  // A project workflow runs with the user's consent, as in pi and over MCP: here subagents.projectAgents gives it.
  world.setSubagentSettings({ projectAgents: "allow" });
  let r: Awaited<ReturnType<typeof cli>>;
  try {
    r = await cli(world, ["flow", "scout-fix", "the", "auth bug", "--json", "--concurrency", "1"], {
      cwd: join(project, "src"),
    });
  } finally {
    world.setSubagentSettings({});
  }
  expect(r.code, r.stderr).toBe(0);
  const [scout, fix] = summaryOf(r.json);
  expect(scout.output).toBe("WF-FOUND-12");
  expect(fix.status, taskWhy(fix)).toBe("completed");
  expect(userTexts()).toContain("WF-FIX the auth bug using WF-FOUND-12");
  expect(userTexts().some((t) => t.startsWith("WF-SCOUT look for the auth bug "))).toBe(true);
}, 90_000);

test("subagents flow lists project and user workflows; unknown names and missing input are usage errors", async () => {
  const list = await cli(world, ["flow"], { cwd: project });
  expect(list.code).toBe(0);
  expect(list.stdout).toMatch(/mine\s+user\s+1 task\s/);
  expect(list.stdout).toMatch(/scout-fix\s+project\s+2 tasks — scout, then fix with what the scout found/);
  const unknown = await cli(world, ["flow", "nope", "x"], { cwd: project });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('Unknown workflow "nope". Available workflows: mine, scout-fix');
  const noInput = await cli(world, ["flow", "mine"], { cwd: project });
  expect(noInput.code).toBe(2);
  expect(noInput.stderr).toContain('workflow "mine"');
  expect(noInput.stderr).toContain("uses {{input}}");
  // The consent rule of every front: with no one at a terminal to ask, a repository's workflow does not run unless
  // subagents.projectAgents allows it; "deny" keeps it from running anyway. The same words as pi's and MCP's.
  const unasked = await cli(world, ["flow", "scout-fix", "x"], { cwd: project });
  expect(unasked.code).toBe(2);
  expect(unasked.stderr).toContain('flow: Project workflow "scout-fix"');
  expect(unasked.stderr).toContain("needs consent; there is no UI to ask");
  world.setSubagentSettings({ projectAgents: "deny" });
  try {
    const denied = await cli(world, ["flow", "scout-fix", "x"], { cwd: project });
    expect(denied.code).toBe(2);
    expect(denied.stderr).toContain('Project workflow "scout-fix"');
    expect(denied.stderr).toContain('subagents.projectAgents is "deny"');
  } finally {
    world.setSubagentSettings({});
  }
}, 60_000);

test("a parent pi starts a workflow with delegate_to_subagents {workflow}; a project one needs consent", async () => {
  const r = await runParentPi(world, {
    runtime: "bun",
    cwd: project,
    steps: [
      { tool: "list_subagent_profiles", args: {} },
      { tool: "delegate_to_subagents", args: { workflow: "mine from the parent" } },
      { tool: "delegate_to_subagents", args: { workflow: "scout-fix something" } },
      { text: "parent done" },
    ],
  });
  expect(r.code, r.stderr).toBe(0);
  const [list, mine, project_] = r.results;
  expect(list.text).toContain("- scout-fix (project, 2 tasks): scout, then fix");
  expect(mine.isError).toBe(false);
  expect(mine.text).toMatch(/^✓ only: completed/);
  expect(userTexts()).toContain("WF-USER from the parent");
  // -p has no UI to ask: a project workflow is refused unless subagents.projectAgents is "allow".
  expect(project_.isError).toBe(true);
  expect(project_.text).toContain('Project workflow "scout-fix"');
  expect(project_.text).toContain("needs consent");
}, 90_000);

test("the workflow recipe in docs/composing.md is a valid call", async () => {
  const { parse } = await import("yaml");
  const { parseDelegateParams } = await import("../../../src/core/delegate-input.ts");
  const page = await Bun.file(join(import.meta.dir, "..", "..", "..", "docs", "composing.md")).text();
  const block = /Recipe — scout[\s\S]*?```yaml\n([\s\S]*?)```/.exec(page)![1];
  const params = parseDelegateParams(JSON.parse(JSON.stringify(parse(block)).replaceAll("{{input}}", "x")));
  expect(params.tasks.map((t) => t.name)).toEqual(["scout", "implement", "review-security", "review-tests", "fix"]);
  expect(params.tasks[4].gate).toBe("npm test");
});
