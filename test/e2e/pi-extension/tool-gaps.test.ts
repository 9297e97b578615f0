// The pi tools in process (their children are REAL pi processes on the scripted model): refused profiles say why,
// a refused project-local profile fails only its own task, status lines carry the profile, `subagent` reports a pi
// that cannot start as a result, and its exitCode is the child's own.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { delegateTool } from "../../../src/pi/tool-delegate.ts";
import { profilesTool } from "../../../src/pi/tool-retrieval.ts";
import { subagentTool } from "../../../src/pi/tool-subagent.ts";
import { makeToolEnv } from "../../../src/pi/tool-env.ts";
import { createServices } from "../../../src/pi/services.ts";
import { script } from "../../../src/scripted/model-server.ts";
import { plainStyle, windowHeader } from "../../../src/ui/windows.ts";
import { piWorld, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;
let ctx: { cwd: string; hasUI: boolean };
const env = () => makeToolEnv({ services: createServices, appendEntry: () => {} });
type Result = { content: { text: string }[]; details: any };

beforeAll(async () => {
  world = await piWorld();
  for (const [k, v] of Object.entries(world.env)) process.env[k] = v;
  ctx = { cwd: world.workDir, hasUI: false };
});
afterAll(async () => {
  await world.close();
});

test("a profile refused for its extraArgs is reported as such (not as unknown), and listed with its reason", async () => {
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  const file = join(agents, "strict.md");
  writeFileSync(
    file,
    "---\nname: strict\ndescription: Reads only\ntools: read\nextraArgs: --tools=bash\n---\nOnly read.\n",
  );
  try {
    const r = (await delegateTool(env()).execute(
      "t",
      {
        tasks: [
          { name: "bad", prompt: "x", profile: "strict" },
          { name: "good", prompt: `y ${script([{ text: "fine" }])}`, profile: "scout" },
        ],
      },
      undefined,
      undefined,
      ctx,
    )) as Result;
    const refusal =
      'Refusing extraArg "--tools=bash" which would override profile tool restrictions. Use the dedicated profile fields instead.';
    expect(r.content[0].text).toContain(`✗ bad: error — Profile "strict" (${file}) cannot be used: ${refusal}`);
    expect(r.content[0].text).not.toContain("Unknown profile");
    // Status lines carry the profile.
    expect(r.content[0].text).toMatch(/✓ good: completed \(profile: scout, session: [0-9a-f]{16}\)/);
    const list = (await profilesTool(env()).execute("t", {}, undefined, undefined, ctx)) as Result;
    expect(list.content[0].text).toContain(`✗ ${file}: ${refusal}`);
    expect(list.details.broken).toBe(1);
    const single = (await subagentTool(env()).execute(
      "t",
      { agent: "strict", task: "x" },
      undefined,
      undefined,
      ctx,
    )) as Result;
    expect(single.details.error.code).toBe("INVALID_INPUT");
    expect(single.content[0].text).toContain(refusal);
  } finally {
    rmSync(file, { force: true });
  }
}, 60_000);

test("headless, a project-local profile without consent fails only its own task", async () => {
  const agents = join(world.workDir, ".pi", "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "repo-helper.md"),
    "---\nname: repo-helper\ndescription: Helps with this repo\n---\nYou help with this repo.\n",
  );
  try {
    const r = (await delegateTool(env()).execute(
      "t",
      {
        tasks: [
          { name: "local", prompt: "x", profile: "repo-helper" },
          { name: "other", prompt: `y ${script([{ text: "other done" }])}` },
        ],
      },
      undefined,
      undefined,
      ctx,
    )) as Result;
    expect(r.content[0].text).toContain('✗ local: error — Project-local profile "repo-helper"');
    expect(r.content[0].text).toContain("needs consent");
    expect(r.content[0].text).toMatch(/✓ other: completed \(session: [0-9a-f]{16}\)/);
    expect(r.content[0].text).toContain("other done");
  } finally {
    rmSync(join(world.workDir, ".pi"), { recursive: true, force: true });
  }
}, 60_000);

test("subagent: a pi that cannot be started is a SUBAGENT_FAILED result, never a thrown error", async () => {
  process.env.SUBAGENTS_PI = "/nonexistent/pi-binary";
  try {
    const r = (await subagentTool(env()).execute(
      "t",
      { agent: "scout", task: "x" },
      undefined,
      undefined,
      ctx,
    )) as Result;
    expect(r.details.error.code).toBe("SUBAGENT_FAILED");
    expect(r.content[0].text).toContain("/nonexistent/pi-binary");
  } finally {
    delete process.env.SUBAGENTS_PI;
  }
}, 60_000);

test("subagent: exitCode is the child's real exit code (a child that never finalized still exited 0)", async () => {
  const r = (await subagentTool(env()).execute(
    "t",
    { agent: "scout", task: `chat ${script([{ text: "a" }, { text: "b" }, { text: "c" }])}` },
    undefined,
    undefined,
    ctx,
  )) as Result;
  expect(r.details.error.code).toBe("FINALIZE_MISSING");
  expect(r.details.results[0].exitCode).toBe(0);
  expect(r.details.results[0].output).toBe("a");
}, 60_000);

test("the window header shows [completed/total] while the child keeps an incomplete todo list", async () => {
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  const file = join(agents, "planner-todo.md");
  writeFileSync(
    file,
    `---\nname: planner-todo\ndescription: Plans with a todo list\nextensions: ${join(import.meta.dir, "..", "..", "fixtures", "todo-extension.ts")}\n---\nKeep a todo list.\n`,
  );
  const todos = [
    { content: "read", status: "completed" },
    { content: "write", status: "in_progress" },
    { content: "test", status: "pending" },
  ];
  const headers = new Set<string>();
  try {
    const r = (await delegateTool(env()).execute(
      "t",
      {
        tasks: [
          {
            name: "planned",
            prompt: `plan ${script([{ tool: "todo", args: { todos } }, { tool: "bash", args: { command: "sleep 1.5" } }, { text: "planned" }])}`,
            profile: "planner-todo",
          },
        ],
      },
      undefined,
      (u: any) => headers.add(windowHeader(u.details.windows[0], plainStyle)),
      ctx,
    )) as Result;
    expect(r.content[0].text).toContain("✓ planned: completed");
    expect([...headers].some((h) => / • 2 tools • \[1\/3\] • \d+s\/600s( • |$)/.test(h))).toBe(true);
  } finally {
    rmSync(file, { force: true });
  }
}, 60_000);
