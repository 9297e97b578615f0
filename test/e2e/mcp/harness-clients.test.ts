// Real harnesses as the MCP client, from npm (cached in node_modules/.cache/harness-clis), run headless against
// their own API scripted on 127.0.0.1: Codex (`codex exec --json`, the Responses API, `subagents mcp` in its test
// CODEX_HOME's config.toml) and Claude Code (`claude -p`, the Messages API, `--mcp-config`). Their model calls our
// delegate_to_subagents and gets the children's results (real pi children against the scripted chat model), and
// the runs are in the store like any other.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startHarnessServer, type HarnessServer } from "../../../src/scripted/harness-servers.ts";
import { script } from "../../../src/scripted/model-server.ts";
import { configureHarness, ensureHarnessCli, type HarnessName, QUIET_ENV } from "../../support/harness-clis.ts";
import { afterClose, cli, piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;
let harness: HarnessServer;
const bins = new Map<HarnessName, string>();
const skipped = new Map<HarnessName, string>();

const toml = (v: string) => JSON.stringify(v);

beforeAll(async () => {
  world = await piWorld();
  harness = await startHarnessServer();
  const names: HarnessName[] = ["codex", "claude-code"];
  const got = await Promise.all(names.map((n) => ensureHarnessCli(n)));
  for (const [i, name] of names.entries()) {
    const g = got[i];
    if ("skip" in g) {
      skipped.set(name, g.skip);
      console.log(`*** SKIPPING the ${name} MCP client test: ${g.skip}`);
    } else bins.set(name, g.binDir);
  }
}, 600_000);

/** What `subagents mcp` needs of the test world in its environment (a harness passes the server only what it is told). */
const SERVER_ENV = ["PI_CODING_AGENT_DIR", "SUBAGENTS_DB", "HOME", "PATH", "NO_COLOR", "SUBAGENTS_TEST_WORLD"];

/** Two tasks whose children answer with the marker, and the harness model's script: call our tool, then finish. */
function delegation(marker: string, tool: string) {
  const tasks = ["alpha", "beta"].map((n) => ({
    name: `${n}-${marker}`,
    prompt: `${n} ${script([{ text: `${n} says hi ${marker}` }])}`,
  }));
  return `delegate ${script([{ tool, args: { tasks } }, { text: `harness done ${marker}` }])}`;
}

async function runHarness(cmd: string[], env: Record<string, string>) {
  const proc = Bun.spawn({ cmd, cwd: world.workDir, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const code = await proc.exited;
  if (world.closed) return afterClose<never>();
  const events = stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, any>);
  return { code, events, why: `exit ${code}\nstdout: ${stdout.slice(-3000)}\nstderr: ${stderr.slice(-2000)}` };
}
afterAll(async () => {
  await harness?.close();
  await world.close();
});

/** Codex's own config (scripted provider) plus `[mcp_servers.subagents]`: our executable in the test world. */
function codexEnv(): Record<string, string> {
  const home = join(world.root, "codex-home");
  const env = configureHarness("codex", home, { origin: harness.origin, chatBaseUrl: world.server.baseUrl });
  const serverEnv = SERVER_ENV.map((k) => `${k} = ${toml(world.env[k] ?? "")}`).join("\n");
  appendFileSync(
    join(env.CODEX_HOME, "config.toml"),
    [
      "[mcp_servers.subagents]",
      `command = ${toml(join(REPO, "dist", "subagents"))}`,
      'args = ["mcp"]',
      `cwd = ${toml(world.workDir)}`,
      // Headless (`exec`) Codex asks for no approval: its MCP tools must be approved up front.
      'default_tools_approval_mode = "approve"',
      "tool_timeout_sec = 300",
      "[mcp_servers.subagents.env]",
      serverEnv,
      "",
    ].join("\n"),
  );
  return { ...QUIET_ENV, ...world.env, ...env, HOME: home, PATH: `${bins.get("codex")}:${world.env.PATH}` };
}

test("Codex's model calls delegate_to_subagents through `subagents mcp` and gets both children's outputs", async () => {
  const bin = bins.get("codex");
  if (!bin) return console.log(`*** SKIPPING: ${skipped.get("codex")}`);
  const marker = `codex-${Date.now()}`;
  const { code, events, why } = await runHarness(
    [
      join(bin, "codex"),
      "exec",
      "--json",
      "--skip-git-repo-check",
      delegation(marker, "mcp__subagents__delegate_to_subagents"),
    ],
    codexEnv(),
  );
  expect(code, why).toBe(0);
  const call = events.find((e) => e.type === "item.completed" && e.item?.type === "mcp_tool_call")?.item;
  expect(call, why).toBeDefined();
  expect(call).toMatchObject({ server: "subagents", tool: "delegate_to_subagents", status: "completed" });
  const text = (call.result.content as { text: string }[]).map((c) => c.text).join("\n");
  expect(text).toContain(`alpha says hi ${marker}`);
  expect(text).toContain(`beta says hi ${marker}`);
  expect(text).toMatch(/Usage: 2 sub-agents/);
  const structured = call.result.structured_content as { tasks: { status: string; sessionId: string }[] };
  expect(structured.tasks.map((t) => t.status)).toEqual(["completed", "completed"]);
  // The result went back to Codex's model, which finished its turn with it.
  const last = harness.requests.filter((r) => r.api === "responses").at(-1)!;
  expect(last.messages.some((m) => m.role === "tool" && m.content.includes(`beta says hi ${marker}`))).toBe(true);
  expect(events.some((e) => e.type === "item.completed" && e.item?.text === `harness done ${marker}`)).toBe(true);
  // The children are recorded in the store like any run.
  const out = await cli(world, ["output", structured.tasks[0].sessionId]);
  expect(out.stdout).toContain(`alpha says hi ${marker}`);
}, 300_000);

test("Claude Code's model calls delegate_to_subagents through `subagents mcp` (--mcp-config) and gets both children's outputs", async () => {
  const bin = bins.get("claude-code");
  if (!bin) return console.log(`*** SKIPPING: ${skipped.get("claude-code")}`);
  const home = join(world.root, "claude-home");
  const env = configureHarness("claude-code", home, { origin: harness.origin, chatBaseUrl: world.server.baseUrl });
  const config = join(world.root, "claude-mcp.json");
  const serverEnv = Object.fromEntries(SERVER_ENV.map((k) => [k, world.env[k] ?? ""]));
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: { subagents: { command: join(REPO, "dist", "subagents"), args: ["mcp"], env: serverEnv } },
    }),
  );
  const marker = `claude-${Date.now()}`;
  const tool = "mcp__subagents__delegate_to_subagents";
  const { code, events, why } = await runHarness(
    [
      join(bin, "claude"),
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--mcp-config",
      config,
      "--strict-mcp-config",
      // Headless Claude Code asks no one: our tool is allowed up front.
      "--allowedTools",
      tool,
      "--",
      delegation(marker, tool),
    ],
    { ...QUIET_ENV, ...world.env, ...env, HOME: home, PATH: `${bin}:${world.env.PATH}` },
  );
  expect(code, why).toBe(0);
  const init = events.find((e) => e.type === "system" && e.subtype === "init");
  expect(init?.mcp_servers, why).toContainEqual({ name: "subagents", status: "connected", source: "dynamic" });
  expect(init?.tools).toContain("mcp__subagents__subagent");
  // What went back to Claude's model as the tool's result (Claude Code hands it our structuredContent).
  const results = events
    .filter((e) => e.type === "user")
    .flatMap((e) => (e.message?.content ?? []) as { type: string; content?: unknown }[])
    .filter((c) => c.type === "tool_result")
    .map((c) => (typeof c.content === "string" ? c.content : JSON.stringify(c.content)));
  expect(results.length, why).toBe(1);
  expect(results[0]).toContain(`alpha says hi ${marker}`);
  expect(results[0]).toContain(`beta says hi ${marker}`);
  expect(events.find((e) => e.type === "result")).toMatchObject({
    subtype: "success",
    result: `harness done ${marker}`,
  });
}, 300_000);
