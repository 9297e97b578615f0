// Other harnesses' agent files and agents that remember, with the real pi as the child against the scripted
// model: a Codex TOML agent runs with its developer_instructions as the system prompt and its read-only sandbox
// as read-only tools; a memory agent starts with its MEMORY.md in the system prompt and, having write tools,
// keeps it (the scripted model writes to the path it was told); a read-only memory agent only reads it; and
// `profiles` shows each agent's harness, file and memory file.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;

beforeAll(async () => {
  world = await piWorld();
  const codex = join(world.workDir, ".codex", "agents");
  mkdirSync(codex, { recursive: true });
  writeFileSync(
    join(codex, "mapper.toml"),
    [
      'name = "mapper"',
      'description = "Maps where a value comes from"',
      'model_reasoning_effort = "low"',
      'sandbox_mode = "read-only"',
      'developer_instructions = """',
      "Trace the value back to its source. TOML-PROMPT-5150",
      '"""',
      "",
    ].join("\n"),
  );
  const pi = join(world.workDir, ".pi", "agents");
  mkdirSync(pi, { recursive: true });
  writeFileSync(
    join(pi, "keeper.md"),
    "---\nname: keeper\ndescription: Remembers the project's build quirks\nmemory: project\n---\nYou build the project.\n",
  );
  writeFileSync(
    join(pi, "porter.md"),
    "---\nname: porter\ndescription: Ports code with Codex\nruntime: codex\n---\nYou port code.\n",
  );
  writeFileSync(
    join(pi, "reader.md"),
    "---\nname: reader\ndescription: Reads its notes only\nmemory: user\nreadonly: true\n---\nYou answer from your notes.\n",
  );
  mkdirSync(join(world.workDir, ".pi", "agent-memory", "keeper"), { recursive: true });
  writeFileSync(
    join(world.workDir, ".pi", "agent-memory", "keeper", "MEMORY.md"),
    "- MEMO-4411: the build needs --frozen\n",
  );
  mkdirSync(join(world.agentDir, "agent-memory", "reader"), { recursive: true });
  writeFileSync(join(world.agentDir, "agent-memory", "reader", "MEMORY.md"), "- MEMO-7720: answers go in French\n");
});
afterAll(() => world.close());

const requestsWith = (marker: string) =>
  world.server.requests.filter((q) => JSON.stringify(q.messages).includes(marker));
const systemOf = (q: (typeof world.server.requests)[number]) => {
  const m = (q.messages ?? []).find((x) => x.role === "system");
  return typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? "");
};
const toolsOf = (q: (typeof world.server.requests)[number]) => (q.tools ?? []).map((t) => t.function?.name).sort();

test("a Codex TOML agent runs on pi: developer_instructions as the system prompt, read-only sandbox as read-only tools", async () => {
  const r = await cli(world, [
    "run",
    "mapper",
    `trace-9031 ${script([{ finalize: { status: "SUCCESS", result: "mapped" } }])}`,
    "--json",
  ]);
  expect(r.code).toBe(0);
  const req = requestsWith("trace-9031")[0];
  expect(systemOf(req)).toContain("TOML-PROMPT-5150");
  expect(toolsOf(req)).toEqual(["find", "grep", "ls", "read", "subagent_finalize"]);
  expect(JSON.stringify(r.json)).toContain('"output":"mapped"');
}, 60_000);

test("a memory agent with write tools starts with its MEMORY.md and keeps it at the path it is told", async () => {
  const file = join(world.workDir, ".pi", "agent-memory", "keeper", "MEMORY.md");
  const steps = [
    {
      tool: "write",
      args: { path: file, content: "- MEMO-4411: the build needs --frozen\n- MEMO-4412: tests need TZ=UTC\n" },
    },
    { finalize: { status: "SUCCESS", result: "built" } },
  ];
  const r = await cli(world, ["run", "keeper", `build-6120 ${script(steps)}`, "--json"]);
  expect(r.code).toBe(0);
  const system = systemOf(requestsWith("build-6120")[0]);
  expect(system).toContain("MEMO-4411: the build needs --frozen");
  expect(system).toContain(`memory file, kept for this project: ${file}`);
  expect(system).toContain("Keep it short and current");
  expect(readFileSync(file, "utf8")).toContain("MEMO-4412");
  // The next run starts with what the last one kept.
  const again = await cli(world, [
    "run",
    "keeper",
    `build-6121 ${script([{ finalize: { status: "SUCCESS", result: "again" } }])}`,
    "--json",
  ]);
  expect(again.code).toBe(0);
  expect(systemOf(requestsWith("build-6121")[0])).toContain("MEMO-4412: tests need TZ=UTC");
}, 90_000);

test("a read-only memory agent reads its notes and gets no tool to change them", async () => {
  const r = await cli(world, [
    "run",
    "reader",
    `notes-3307 ${script([{ finalize: { status: "SUCCESS", result: "read" } }])}`,
    "--json",
  ]);
  expect(r.code).toBe(0);
  const req = requestsWith("notes-3307")[0];
  expect(systemOf(req)).toContain("MEMO-7720: answers go in French");
  expect(systemOf(req)).toContain("read-only for you");
  expect(systemOf(req)).not.toContain("Keep it short and current");
  expect(toolsOf(req)).toEqual(["find", "grep", "ls", "read", "subagent_finalize"]);
}, 60_000);

test("profiles shows each agent's harness, file and memory file", async () => {
  const table = await cli(world, ["profiles"], { env: { COLUMNS: "120" } });
  expect(table.code).toBe(0);
  const line = (name: string) => table.stdout.split("\n").find((l) => l.startsWith(`${name} `)) ?? "";
  expect(line("mapper")).toMatch(/^mapper\s+project\s+codex\s/);
  expect(line("keeper")).toMatch(/^keeper\s+project\s+pi\s/);
  const json = (await cli(world, ["profiles", "--json"])).json.filter((e) => e.type === "profile");
  const byName = Object.fromEntries(json.map((p) => [p.name, p]));
  expect(byName.mapper).toMatchObject({
    harness: "codex",
    filePath: join(world.workDir, ".codex", "agents", "mapper.toml"),
    thinking: "low",
    readonly: true,
  });
  expect(byName.keeper.memoryFile).toBe(join(world.workDir, ".pi", "agent-memory", "keeper", "MEMORY.md"));
  expect(byName.reader.memoryFile).toBe(join(world.agentDir, "agent-memory", "reader", "MEMORY.md"));
  expect(byName.scout.harness).toBe("pi");
  const all = await cli(world, ["profiles", "--all"], { env: { COLUMNS: "200" } });
  expect(all.stdout).toContain(`mapper (project, codex) ${join(world.workDir, ".codex", "agents", "mapper.toml")}`);
  expect(all.stdout).toContain(`  memory (user): ${join(world.agentDir, "agent-memory", "reader", "MEMORY.md")}`);
}, 60_000);

test("profiles shows the runtime of an agent that runs on another harness's CLI, within the terminal's width", async () => {
  const table = await cli(world, ["profiles"], { env: { COLUMNS: "80" } });
  expect(table.code).toBe(0);
  const lines = table.stdout.split("\n").filter(Boolean);
  expect(lines[0]).toMatch(/^NAME\s+SOURCE\s+HARNESS\s+RUNTIME\s+MODEL/);
  expect(lines.find((l) => l.startsWith("porter "))).toMatch(/^porter\s+project\s+pi\s+codex\s/);
  expect(lines.find((l) => l.startsWith("keeper "))).toMatch(/^keeper\s+project\s+pi\s+pi\s/);
  for (const l of lines) expect(Bun.stringWidth(l)).toBeLessThanOrEqual(80);
  const json = (await cli(world, ["profiles", "--json"])).json.filter((e) => e.type === "profile");
  expect(json.find((p) => p.name === "porter")?.runtime).toBe("codex");
  expect(json.find((p) => p.name === "keeper")?.runtime).toBe("pi");
  const all = await cli(world, ["profiles", "--all"], { env: { COLUMNS: "200" } });
  expect(all.stdout).toContain(
    `porter (project, pi, runs on codex) ${join(world.workDir, ".pi", "agents", "porter.md")}`,
  );
}, 60_000);

test("doctor checks the CLI of each runtime agents use: ✗ naming the npm package and the agents, ✓ with its path", async () => {
  const runtimeChecks = async (env: Record<string, string>, cwd?: string) => {
    const r = await cli(world, ["doctor", "--json", ...(cwd ? ["--cwd", cwd] : [])], { env });
    return { code: r.code, checks: (JSON.parse(r.stdout).checks as any[]).filter((c) => c.name === "runtime") };
  };
  const bare = (world.env.PATH ?? "")
    .split(":")
    .filter((d) => d && !existsSync(join(d, "codex")))
    .join(":");
  const missing = await runtimeChecks({ PATH: bare });
  expect(missing.code).toBe(1);
  expect(missing.checks).toEqual([
    {
      name: "runtime",
      status: "fail",
      detail: 'codex: "codex" not found on PATH, needed by agents: porter',
      fix: "npm install -g @openai/codex",
    },
  ]);
  // A fake codex: only looked up, never run (it would leave its mark).
  const bin = join(world.root, "fake-codex-bin");
  mkdirSync(bin, { recursive: true });
  const mark = join(world.root, "codex-ran");
  writeFileSync(join(bin, "codex"), `#!/bin/sh\ntouch ${mark}\n`);
  chmodSync(join(bin, "codex"), 0o755);
  const found = await runtimeChecks({ PATH: `${bin}:${bare}` });
  expect(found.checks).toEqual([
    { name: "runtime", status: "ok", detail: `codex: ${join(bin, "codex")} (agents: porter)` },
  ]);
  expect(existsSync(mark)).toBe(false);
  // Where no agent names another runtime, there is no such line.
  const elsewhere = join(world.root, "plain-project");
  mkdirSync(elsewhere, { recursive: true });
  expect((await runtimeChecks({ PATH: bare }, elsewhere)).checks).toEqual([]);
}, 90_000);
