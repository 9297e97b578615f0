// Claude Code agent files run with the real pi against the scripted model: `model: sonnet`, `haiku`,
// `inherit` and a dated claude id complete on the model the user has (with the substitution said in the
// record), `subagents.modelAliases` picks the model, the child is told about tools it does not have; and the
// `profiles` command (table width, --json, --all, --check) on installed collections.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { Store } from "../../../src/core/store/store.ts";
import { bunDbOpener } from "../../../src/host/sqlite-bun.ts";
import { visibleWidth } from "../../../src/ui/text-width.ts";
import { cli, piCmd, piWorld, requestsOfTask, type PiWorld } from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";

let world: PiWorld;
const FIXTURES = join(import.meta.dir, "..", "..", "fixtures", "agent-collections");

beforeAll(async () => {
  world = await piWorld();
  // A second model the user has, so a chosen model is visible in the requests.
  const models = JSON.parse(readFileSync(join(world.agentDir, "models.json"), "utf8"));
  models.providers.fake.models.push({ id: "other-model" });
  writeFileSync(join(world.agentDir, "models.json"), JSON.stringify(models));
  const agents = join(world.root, ".claude", "agents", "mine");
  mkdirSync(agents, { recursive: true });
  const agent = (name: string, model: string, tools = "Read, Grep, Glob") =>
    writeFileSync(
      join(agents, `${name}.md`),
      `---\nname: ${name}\ndescription: "Agent on ${model}: checks things"\ntools: ${tools}\nmodel: ${model}\n---\nYou are the ${name} agent.\n`,
    );
  agent("on-sonnet", "sonnet", "Read, Grep, Glob, WebFetch, TodoWrite");
  agent("on-haiku", "haiku");
  agent("on-inherit", "inherit");
  agent("on-dated", "claude-sonnet-4-20250514");
});
afterAll(() => world.close());

const summaryOf = (json: Record<string, any>[]) =>
  json.find((e) => e.type === "summary")!.tasks as Record<string, any>[];
const requestsWith = (marker: string) =>
  world.server.requests.filter((q) => JSON.stringify(q.messages).includes(marker));
const systemOf = (q: (typeof world.server.requests)[number]) => {
  const m = (q.messages ?? []).find((x) => x.role === "system");
  return typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? "");
};

test("sonnet, haiku, inherit and a dated claude id run to completion on the user's model, substitutions recorded", async () => {
  const names = ["on-sonnet", "on-haiku", "on-inherit", "on-dated"];
  const file = join(world.root, "claude-models.json");
  writeFileSync(
    file,
    JSON.stringify({
      tasks: names.map((n) => ({
        name: n,
        profile: n,
        prompt: `check ${n}-7731 ${script([{ finalize: { status: "SUCCESS", result: `done ${n}` } }])}`,
      })),
    }),
  );
  const r = await cli(world, ["delegate", "--tasks", file, "--json"]);
  expect(r.code).toBe(0);
  const tasks = summaryOf(r.json);
  expect(tasks.map((t) => [t.name, t.status, t.output])).toEqual(names.map((n) => [n, "completed", `done ${n}`]));
  for (const n of names) expect(requestsWith(`${n}-7731`).every((q) => q.model === "fake-model")).toBe(true);
  const byName = Object.fromEntries(tasks.map((t) => [t.name, t]));
  expect(byName["on-sonnet"].warnings[0]).toContain(
    'model "sonnet" is a Claude model and there are no Anthropic credentials here: running on fake/fake-model',
  );
  expect(byName["on-haiku"].warnings[0]).toContain('model "haiku"');
  expect(byName["on-dated"].warnings[0]).toContain('model "claude-sonnet-4-20250514"');
  expect(byName["on-inherit"].warnings).toBeUndefined();
  // The record keeps them too.
  const store = new Store(bunDbOpener(Database)(world.env.SUBAGENTS_DB), { isAlive: () => false });
  expect(store.getSession(byName["on-haiku"].sessionId)!.runs[0].warnings?.[0]).toContain('model "haiku"');
}, 90_000);

test("the child gets the mapped tools and is told which listed ones it does not have", async () => {
  const r = await cli(world, [
    "run",
    "on-sonnet",
    `tools-5512 ${script([{ finalize: { status: "SUCCESS", result: "ok" } }])}`,
    "--json",
  ]);
  expect(r.code).toBe(0);
  const req = requestsWith("tools-5512")[0];
  const tools = (req.tools ?? []).map((t) => t.function?.name).sort();
  // Headless (--json): nobody can answer, so no ask_parent (issue 35: a tool that can only say "no one can answer").
  expect(tools).toEqual(["find", "grep", "read", "subagent_finalize"]);
  expect(systemOf(req)).toContain("do not exist in this environment: WebFetch, TodoWrite");
  expect(r.stderr + JSON.stringify(r.json)).toContain("tools not available here: WebFetch, TodoWrite");
}, 60_000);

test("subagents.modelAliases chooses the model (no warning); an unknown bare model falls back with one", async () => {
  world.setSubagentSettings({ modelAliases: { sonnet: "fake/other-model" } });
  try {
    const r = await cli(world, [
      "run",
      "on-sonnet",
      `alias-8821 ${script([{ finalize: { status: "SUCCESS", result: "aliased" } }])}`,
      "--json",
    ]);
    expect(r.code).toBe(0);
    expect(requestsWith("alias-8821").map((q) => q.model)).toEqual(["other-model"]);
    expect(summaryOf(r.json)[0].warnings).toEqual(["tools not available here: WebFetch, TodoWrite"]);
  } finally {
    world.setSubagentSettings({});
  }
  const u = await cli(world, [
    "run",
    "default",
    `bare-6610 ${script([{ finalize: { status: "SUCCESS", result: "fell back" } }])}`,
    "--model",
    "fable",
    "--json",
  ]);
  expect(u.code).toBe(0);
  const t = summaryOf(u.json)[0];
  expect(t.output).toBe("fell back");
  // pi either does not know the name or matches it to a provider without credentials; both fall back.
  expect(t.warnings[0]).toMatch(
    /^model "fable" (is not known to pi here|is matched by pi to provider "[\w.-]+", which has no credentials here): running on fake\/fake-model/,
  );
}, 60_000);

test("profiles: a table no wider than the terminal, --json per profile, --all lists non-agents, --check fails on a broken file", async () => {
  const claude = join(world.root, ".claude", "agents");
  cpSync(join(FIXTURES, "categories"), join(claude, "categories"), { recursive: true });
  cpSync(join(FIXTURES, "examples-inline"), claude, { recursive: true });
  const table = await cli(world, ["profiles"], { env: { COLUMNS: "60" } });
  expect(table.code).toBe(0);
  const lines = table.stdout.split("\n").filter(Boolean);
  expect(lines[0]).toMatch(/^NAME\s+SOURCE\s+HARNESS\s+MODEL\s+TOOLS\s+WARNINGS$/);
  for (const l of lines) expect(visibleWidth(l)).toBeLessThanOrEqual(60);
  expect(lines.some((l) => l.startsWith("poster-maker"))).toBe(true);
  expect(lines.some((l) => l.startsWith("route-planner") && l.includes("haiku→"))).toBe(true);

  const json = await cli(world, ["profiles", "--json"]);
  const profiles = json.json.filter((e) => e.type === "profile");
  for (const p of profiles) {
    expect(typeof p.name).toBe("string");
    expect(["builtin", "user", "project"]).toContain(p.source);
    expect("filePath" in p).toBe(true);
    expect(Array.isArray(p.warnings)).toBe(true);
  }
  const poster = profiles.find((p) => p.name === "poster-maker")!;
  expect(poster.filePath).toBe(join(claude, "design", "poster-maker.md"));
  expect(poster.warnings.join("\n")).toContain("not strict YAML");
  expect(poster.runsOn).toBe("default");

  const all = await cli(world, ["profiles", "--all"], { env: { COLUMNS: "80" } });
  expect(all.stdout.replace(/\n {4}/g, " ")).toContain(
    `not an agent (no front matter): ${join(claude, "marketing", "slogan-writer.md")}`,
  );
  expect(all.stdout).toContain("\n  ⚠ tools not available here: WebSearch");
  for (const l of all.stdout.split("\n")) expect(visibleWidth(l)).toBeLessThanOrEqual(80);

  expect((await cli(world, ["profiles", "--check"])).code).toBe(0);
  const project = join(world.workDir, ".pi", "agents");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "broken.md"), "---\ndescription: broken\nthinking: warp\n---\nBody\n");
  const check = await cli(world, ["profiles", "--check"]);
  expect(check.code).toBe(1);
  expect(check.stderr).toContain('broken.md: unknown thinking level "warp"');
  expect((await cli(world, ["profiles"])).code).toBe(0);
}, 60_000);

test("in pi, `model: inherit` runs on the parent's model (not the default); `sonnet` falls back with a window warning", async () => {
  const sessionFile = join(world.root, `parent-inherit-${Date.now()}.jsonl`);
  world.setSubagentSettings({ projectAgents: "allow" });
  const steps = [
    {
      tool: "delegate_to_subagents",
      args: {
        tasks: [
          { name: "inh", prompt: "inherit-check-4410", profile: "on-inherit" },
          { name: "son", prompt: "sonnet-check-4411", profile: "on-sonnet" },
        ],
      },
    },
    { text: "parent done" },
  ];
  const proc = Bun.spawn({
    cmd: [
      ...piCmd("current", "bun"),
      "-p",
      "--session",
      sessionFile,
      "--model",
      "fake/other-model",
      "-e",
      join(import.meta.dir, "..", "..", "..", "dist", "extension.js"),
    ],
    cwd: world.workDir,
    env: world.env,
    stdin: new TextEncoder().encode(`parent task ${script(steps)}`),
    stdout: "pipe",
    stderr: "pipe",
  });
  await new Response(proc.stdout).text();
  expect(await proc.exited).toBe(0);
  world.setSubagentSettings({});
  // The children's own requests (the parent's requests carry the task text too, in its tool call, and each child's
  // team note names its sibling's task).
  const child = (marker: string) => requestsOfTask(world, marker);
  const inherited = child("inherit-check-4410").map((q) => q.model);
  expect(inherited.length).toBeGreaterThan(0);
  expect(new Set(inherited)).toEqual(new Set(["other-model"]));
  const fellBack = child("sonnet-check-4411").map((q) => q.model);
  expect(fellBack.length).toBeGreaterThan(0);
  expect(new Set(fellBack)).toEqual(new Set(["fake-model"]));
  const result = readFileSync(sessionFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((e) => e.type === "message" && e.message?.role === "toolResult")!.message;
  const [inh, son] = result.details.windows;
  expect([inh.status, son.status]).toEqual(["completed", "completed"]);
  expect(inh.warnings).toBeUndefined();
  expect(son.warnings[0]).toContain('model "sonnet" is a Claude model');
}, 90_000);

test("an agent file whose YAML is broken: why its run differs is shown where the run is shown — the CLI's end lines, `wait` on a background run, its log, and pi's tool results", async () => {
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  // `model:` is garbled by an unquoted `: [`: read line by line, the model is unknown, the child runs on the default.
  writeFileSync(
    join(agents, "garbled.md"),
    "---\nname: garbled\ndescription: garbled: yes\nmodel: nonsense: [x\n---\nBody\n",
  );
  const lenient = "garbled.md: front matter is not strict YAML";
  const fallback = 'model "nonsense: [x" is not known to pi here: running on fake/fake-model instead';
  const run = await cli(world, ["run", "garbled", `garbled-7701 ${script([{ text: "ran anyway" }])}`], {
    binary: true,
  });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toContain(`⚠ ${lenient}`);
  expect(run.stderr).toContain(`⚠ ${fallback}`);
  const bg = await cli(
    world,
    ["delegate", "--background", "--json", "--profile", "garbled", `garbled-7702 ${script([{ text: "ran" }])}`],
    {
      binary: true,
    },
  );
  const id = bg.json.find((e) => e.type === "task_background")!.sessionId as string;
  const waited = await cli(world, ["wait", id], { binary: true });
  expect(waited.code, waited.stderr).toBe(0);
  expect(waited.stdout).toContain(`⚠ ${lenient}`);
  expect(waited.stdout).toContain(`⚠ ${fallback}`);
  const logs = await cli(world, ["logs", id], { binary: true });
  expect(logs.stdout).toContain(`⚠ ${fallback}`);
  // pi: both tools' results say it, not only their details.
  const steps = [
    {
      tool: "delegate_to_subagents",
      args: { tasks: [{ name: "g", profile: "garbled", prompt: `garbled-7703 ${script([{ text: "ok" }])}` }] },
    },
    { tool: "subagent", args: { agent: "garbled", task: `garbled-7704 ${script([{ text: "ok" }])}` } },
    { text: "parent done" },
  ];
  const parent = await runParentPi(world, { runtime: "node", steps });
  expect(parent.code, parent.stderr).toBe(0);
  const results = parent.results.map((x) => x.text);
  expect(results).toHaveLength(2);
  expect(results[0]).toContain(`✓ g: completed`);
  expect(results[0]).toContain(`  ⚠ ${lenient}`);
  expect(results[1]).toContain("**Warnings:**");
  expect(results[1]).toContain(`- ${fallback}`);
}, 120_000);
