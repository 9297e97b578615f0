// Children get what the user's pi 1.x gives (issue 21, item 3): MCP tools and codemode pass through when no agent
// restricts tools; `mcp: false` starts no server; a server that never answers costs one probe per call, not pi's
// 10 s wait in every child. Children are REAL current-pi processes (the system pi) on the scripted model, with a
// scripted stdio MCP server (test/fixtures/mcp-server.ts).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import {
  CURRENT_PI_VERSION,
  BUN,
  cli,
  PI_PACKAGE_DIRS,
  piWorld,
  REPO,
  summaryOf,
  type PiWorld,
} from "../../support/pi-env.ts";

const FIXTURE = join(REPO, "test", "fixtures", "mcp-server.ts");
let world: PiWorld;
let log: string;

function setServers(servers: Record<string, { args?: string[]; exposure?: string }>) {
  const mcpServers: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(servers))
    mcpServers[name] = {
      command: BUN,
      args: [FIXTURE, "--log", log, ...(s.args ?? [])],
      ...(s.exposure ? { exposure: s.exposure } : {}),
    };
  writeFileSync(join(world.agentDir, "mcp.json"), JSON.stringify({ mcpServers }));
}
const starts = () =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("start")).length
    : 0;
const calls = () =>
  existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("call"))
    : [];
const requestsWith = (marker: string) =>
  world.server.requests.filter((r) => JSON.stringify(r.messages ?? []).includes(marker));
const toolNames = (marker: string) => (requestsWith(marker)[0]?.tools ?? []).map((t) => t.function?.name ?? "");

beforeAll(async () => {
  world = await piWorld();
  log = join(world.root, "mcp.log");
  // The current pi (node_modules, under Node 24) as the children's pi, not the executable's embedded copy.
  world.setSubagentSettings({ childPi: PI_PACKAGE_DIRS.current, childRuntime: "node" });
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "nomcp.md"),
    "---\nname: nomcp\ndescription: No MCP servers\nmcp: false\n---\nWork without MCP.\n",
  );
  writeFileSync(
    join(agents, "onlyfx.md"),
    "---\nname: onlyfx\ndescription: Only the fx server\nmcp: [fx]\n---\nUse fx.\n",
  );
  writeFileSync(
    join(agents, "looker.md"),
    "---\nname: looker\ndescription: Read only\nreadonly: true\n---\nLook only.\n",
  );
  // Claude Code's spelling of an MCP tool is pi 1.x's own: an allow list may name one.
  writeFileSync(
    join(agents, "echoer.md"),
    "---\nname: echoer\ndescription: Reads and echoes\ntools: Read, mcp__fx__echo\n---\nEcho.\n",
  );
});
afterAll(async () => {
  await world.close();
});

test(`a pi ${CURRENT_PI_VERSION} child calls a real MCP server's tool, directly and from codemode; no --tools list drops them`, async () => {
  rmSync(log, { force: true });
  setServers({ fx: { exposure: "direct" } });
  const r = await cli(world, [
    "run",
    "default",
    `mcp-4411 ${script([{ tool: "mcp__fx__echo", args: { text: "hello-4411" } }, { text: "echoed" }])}`,
    "--json",
  ]);
  expect(r.code).toBe(0);
  expect(calls()).toEqual(['call echo {"text":"hello-4411"}']);
  // The MCP tool's answer reached the child's model.
  expect(JSON.stringify(requestsWith("mcp-4411").at(-1)?.messages)).toContain("echo: hello-4411");
  // Children are at max depth (1): only delegation tools are taken away, everything else pi gives stays.
  expect(toolNames("mcp-4411")).toEqual(
    expect.arrayContaining(["read", "bash", "edit", "write", "mcp__fx__echo", "mcp__fx__add"]),
  );

  setServers({ fx: {} }); // pi's default exposure: reachable from codemode scripts
  const code = "const r = await tools.mcp__fx__add({a: 2, b: 40}); return r.structuredContent.sum;";
  const c = await cli(world, [
    "run",
    "default",
    `code-4412 ${script([{ tool: "codemode", args: { code } }, { text: "summed" }])}`,
    "--json",
  ]);
  expect(c.code).toBe(0);
  expect(toolNames("code-4412")).toContain("codemode");
  expect(JSON.stringify(requestsWith("code-4412").at(-1)?.messages)).toContain("42");
}, 90_000);

test("mcp: false starts no server; a read-only agent neither; mcp: [fx] keeps fx and hides the others' tools", async () => {
  rmSync(log, { force: true });
  setServers({ fx: { exposure: "direct" } });
  const a = await cli(world, ["run", "nomcp", `none-4421 ${script([{ text: "ok" }])}`, "--json"]);
  expect(a.code).toBe(0);
  const b = await cli(world, ["run", "looker", `ro-4422 ${script([{ text: "ok" }])}`, "--json"]);
  expect(b.code).toBe(0);
  expect(starts()).toBe(0);
  expect(toolNames("none-4421")).not.toContain("mcp__fx__echo");
  // Read-only keeps the spec's contract: no write/edit, and no codemode or MCP tools that could write.
  expect(toolNames("ro-4422").sort()).toEqual(["find", "grep", "ls", "read", "subagent_finalize"]);

  setServers({ fx: { exposure: "direct" }, other: { exposure: "direct" } });
  const c = await cli(world, ["run", "onlyfx", `only-4423 ${script([{ text: "ok" }])}`, "--json"]);
  expect(c.code).toBe(0);
  const names = toolNames("only-4423");
  expect(names).toContain("mcp__fx__echo");
  expect(names.some((n) => n.startsWith("mcp__other__"))).toBe(false);

  const d = await cli(world, [
    "run",
    "echoer",
    `allow-4424 ${script([{ tool: "mcp__fx__echo", args: { text: "allowed" } }, { text: "ok" }])}`,
    "--json",
  ]);
  expect(d.code).toBe(0);
  expect(toolNames("allow-4424").sort()).toEqual(["mcp__fx__echo", "read", "subagent_finalize"]);
  expect(calls()).toContain('call echo {"text":"allowed"}');
}, 90_000);

test("Claude Code's mcpServers: a list of names keeps just those servers; an inline definition of a configured name uses pi's server", async () => {
  rmSync(log, { force: true });
  setServers({ fx: { exposure: "direct" }, other: { exposure: "direct" } });
  const agents = join(world.agentDir, "agents");
  writeFileSync(
    join(agents, "named.md"),
    "---\nname: named\ndescription: Names fx\nmcpServers:\n  - fx\n---\nUse fx.\n",
  );
  // The file's own definition is not started (a repository's command); the user's fx of the same name is.
  writeFileSync(
    join(agents, "defines.md"),
    "---\nname: defines\ndescription: Defines fx\nmcpServers:\n  fx:\n    command: /nonexistent/fx-server\n---\nUse fx.\n",
  );
  for (const [agent, marker] of [
    ["named", "named-4441"],
    ["defines", "defines-4442"],
  ]) {
    const r = await cli(world, [
      "run",
      agent,
      `${marker} ${script([{ tool: "mcp__fx__echo", args: { text: marker } }, { text: "ok" }])}`,
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const names = toolNames(marker);
    expect(names).toContain("mcp__fx__echo");
    expect(names.some((n) => n.startsWith("mcp__other__"))).toBe(false);
    expect(calls()).toContain(`call echo {"text":"${marker}"}`);
  }
}, 90_000);

test("a server that never answers costs one probe per call, not pi's 10 s wait in each child", async () => {
  rmSync(log, { force: true });
  setServers({ dead: { args: ["--dead"], exposure: "direct" } });
  const r = await cli(world, [
    "delegate",
    ...["d1", "d2", "d3"].map((n) => `${n}-4431 ${script([{ text: "ok" }])}`),
    "--concurrency",
    "1",
    "--json",
  ]);
  expect(r.code).toBe(0);
  const tasks = summaryOf(r.json);
  expect(tasks).toHaveLength(3);
  for (const t of tasks)
    expect(t.warnings).toEqual(["MCP server dead did not answer: the child runs without MCP servers"]);
  // pi waits for a server only after starting it: a server started once, by the probe, is a wait of one probe for
  // the call — three children one after another never waited in pi. (A wall-clock bound here had failed on a
  // machine busy enough to make three child starts and the probe's 10 s take over 20 s.)
  expect(starts()).toBe(1);
}, 90_000);
