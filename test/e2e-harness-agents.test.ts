// Other harnesses' agent files and agents that remember, with the real pi as the child against the scripted
// model: a Codex TOML agent runs with its developer_instructions as the system prompt and its read-only sandbox
// as read-only tools; a memory agent starts with its MEMORY.md in the system prompt and, having write tools,
// keeps it (the scripted model writes to the path it was told); a read-only memory agent only reads it; and
// `profiles` shows each agent's harness, file and memory file.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld } from "./support/pi-env.ts";

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
  writeFileSync(join(pi, "keeper.md"), "---\nname: keeper\ndescription: Remembers the project's build quirks\nmemory: project\n---\nYou build the project.\n");
  writeFileSync(join(pi, "reader.md"), "---\nname: reader\ndescription: Reads its notes only\nmemory: user\nreadonly: true\n---\nYou answer from your notes.\n");
  mkdirSync(join(world.workDir, ".pi", "agent-memory", "keeper"), { recursive: true });
  writeFileSync(join(world.workDir, ".pi", "agent-memory", "keeper", "MEMORY.md"), "- MEMO-4411: the build needs --frozen\n");
  mkdirSync(join(world.agentDir, "agent-memory", "reader"), { recursive: true });
  writeFileSync(join(world.agentDir, "agent-memory", "reader", "MEMORY.md"), "- MEMO-7720: answers go in French\n");
});
afterAll(() => world.close());

const requestsWith = (marker: string) => world.server.requests.filter((q) => JSON.stringify(q.messages).includes(marker));
const systemOf = (q: (typeof world.server.requests)[number]) => {
  const m = (q.messages ?? []).find((x) => x.role === "system");
  return typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? "");
};
const toolsOf = (q: (typeof world.server.requests)[number]) => (q.tools ?? []).map((t) => t.function?.name).sort();

test("a Codex TOML agent runs on pi: developer_instructions as the system prompt, read-only sandbox as read-only tools", async () => {
  const r = await cli(world, ["run", "mapper", `trace-9031 ${script([{ finalize: { status: "SUCCESS", result: "mapped" } }])}`, "--json"]);
  expect(r.code).toBe(0);
  const req = requestsWith("trace-9031")[0];
  expect(systemOf(req)).toContain("TOML-PROMPT-5150");
  expect(toolsOf(req)).toEqual(["ask_parent", "find", "grep", "ls", "read", "subagent_finalize"]);
  expect(JSON.stringify(r.json)).toContain('"output":"mapped"');
}, 60_000);

test("a memory agent with write tools starts with its MEMORY.md and keeps it at the path it is told", async () => {
  const file = join(world.workDir, ".pi", "agent-memory", "keeper", "MEMORY.md");
  const steps = [
    { tool: "write", args: { path: file, content: "- MEMO-4411: the build needs --frozen\n- MEMO-4412: tests need TZ=UTC\n" } },
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
  const again = await cli(world, ["run", "keeper", `build-6121 ${script([{ finalize: { status: "SUCCESS", result: "again" } }])}`, "--json"]);
  expect(again.code).toBe(0);
  expect(systemOf(requestsWith("build-6121")[0])).toContain("MEMO-4412: tests need TZ=UTC");
}, 90_000);

test("a read-only memory agent reads its notes and gets no tool to change them", async () => {
  const r = await cli(world, ["run", "reader", `notes-3307 ${script([{ finalize: { status: "SUCCESS", result: "read" } }])}`, "--json"]);
  expect(r.code).toBe(0);
  const req = requestsWith("notes-3307")[0];
  expect(systemOf(req)).toContain("MEMO-7720: answers go in French");
  expect(systemOf(req)).toContain("read-only for you");
  expect(systemOf(req)).not.toContain("Keep it short and current");
  expect(toolsOf(req)).toEqual(["ask_parent", "find", "grep", "ls", "read", "subagent_finalize"]);
}, 60_000);

test("profiles shows each agent's harness, file and memory file", async () => {
  const table = await cli(world, ["profiles"], { env: { COLUMNS: "120" } });
  expect(table.code).toBe(0);
  const line = (name: string) => table.stdout.split("\n").find((l) => l.startsWith(`${name} `)) ?? "";
  expect(line("mapper")).toMatch(/^mapper\s+project\s+codex\s/);
  expect(line("keeper")).toMatch(/^keeper\s+project\s+pi\s/);
  const json = (await cli(world, ["profiles", "--json"])).json.filter((e) => e.type === "profile");
  const byName = Object.fromEntries(json.map((p) => [p.name, p]));
  expect(byName.mapper).toMatchObject({ harness: "codex", filePath: join(world.workDir, ".codex", "agents", "mapper.toml"), thinking: "low", readonly: true });
  expect(byName.keeper.memoryFile).toBe(join(world.workDir, ".pi", "agent-memory", "keeper", "MEMORY.md"));
  expect(byName.reader.memoryFile).toBe(join(world.agentDir, "agent-memory", "reader", "MEMORY.md"));
  expect(byName.scout.harness).toBe("pi");
  const all = await cli(world, ["profiles", "--all"], { env: { COLUMNS: "200" } });
  expect(all.stdout).toContain(`mapper (project, codex) ${join(world.workDir, ".codex", "agents", "mapper.toml")}`);
  expect(all.stdout).toContain(`  memory (user): ${join(world.agentDir, "agent-memory", "reader", "MEMORY.md")}`);
}, 60_000);
