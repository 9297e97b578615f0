// A real harness as the MCP client: Codex (`@openai/codex` from npm, cached in node_modules/.cache/harness-clis),
// run headless (`codex exec --json`) against a scripted Responses API on 127.0.0.1, with `subagents mcp` in its
// test CODEX_HOME's config.toml. Its model calls our delegate_to_subagents and gets the children's results (real
// pi children against the scripted chat model), and the runs are in the store like any other.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { startHarnessServer, type HarnessServer } from "../../../src/scripted/harness-servers.ts";
import { script } from "../../../src/scripted/model-server.ts";
import { configureHarness, ensureHarnessCli, QUIET_ENV } from "../../support/harness-clis.ts";
import { afterClose, cli, piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;
let harness: HarnessServer;
let bin: string | undefined;
let skip = "";

const toml = (v: string) => JSON.stringify(v);

beforeAll(async () => {
  world = await piWorld();
  harness = await startHarnessServer();
  const got = await ensureHarnessCli("codex");
  if ("skip" in got) {
    skip = got.skip;
    console.log(`*** SKIPPING the Codex MCP client test: ${skip}`);
  } else bin = got.binDir;
}, 600_000);
afterAll(async () => {
  await harness?.close();
  await world.close();
});

/** Codex's own config (scripted provider) plus `[mcp_servers.subagents]`: our executable in the test world. */
function codexEnv(): Record<string, string> {
  const home = join(world.root, "codex-home");
  const env = configureHarness("codex", home, { origin: harness.origin, chatBaseUrl: world.server.baseUrl });
  const serverEnv = ["PI_CODING_AGENT_DIR", "SUBAGENTS_DB", "HOME", "PATH", "NO_COLOR", "SUBAGENTS_TEST_WORLD"]
    .map((k) => `${k} = ${toml(world.env[k] ?? "")}`)
    .join("\n");
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
  return { ...QUIET_ENV, ...world.env, ...env, HOME: home, PATH: `${bin}:${world.env.PATH}` };
}

test("Codex's model calls delegate_to_subagents through `subagents mcp` and gets both children's outputs", async () => {
  if (!bin) return console.log(`*** SKIPPING: ${skip}`);
  const marker = `codex-${Date.now()}`;
  const tasks = ["alpha", "beta"].map((n) => ({
    name: `${n}-${marker}`,
    prompt: `${n} ${script([{ text: `${n} says hi ${marker}` }])}`,
  }));
  const steps = [{ tool: "mcp__subagents__delegate_to_subagents", args: { tasks } }, { text: `codex done ${marker}` }];
  const proc = Bun.spawn({
    cmd: [join(bin, "codex"), "exec", "--json", "--skip-git-repo-check", `delegate ${script(steps)}`],
    cwd: world.workDir,
    env: codexEnv(),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const code = await proc.exited;
  if (world.closed) return afterClose();
  const events = stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, any>);
  const why = `codex exit ${code}\nstdout: ${stdout.slice(-3000)}\nstderr: ${stderr.slice(-2000)}`;
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
  expect(events.some((e) => e.type === "item.completed" && e.item?.text === `codex done ${marker}`)).toBe(true);
  // The children are recorded in the store like any run.
  const out = await cli(world, ["output", structured.tasks[0].sessionId]);
  expect(out.stdout).toContain(`alpha says hi ${marker}`);
}, 300_000);
