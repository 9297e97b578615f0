// Real harnesses as the MCP client, the newest from npm (cached in node_modules/.cache/harness-clis), against their
// own API scripted on 127.0.0.1, each set up with README's snippet as pasted (`subagents` on PATH): Codex headless
// (`codex exec --json`, README's config.toml block with its approval setting) and Claude Code headless (`claude
// mcp add`, then `claude -p`) each get a 3 × 60 KB delegation, and what their model receives — not what the
// client prints — holds every task's status, error and session id. Claude Code's terminal UI (tmux) follows a
// delegation as an MCP task (Tasks extension): a child's question answered in its form, the result collected
// later by its model; with Tasks off it shows the call's progress and Esc stops the children.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processesWithEnv } from "../../../src/host/proc-marks.ts";
import { startHarnessServer, type HarnessServer } from "../../../src/scripted/harness-servers.ts";
import { messageText, script } from "../../../src/scripted/model-server.ts";
import { configureHarness, ensureHarnessCli, type HarnessName, QUIET_ENV } from "../../support/harness-clis.ts";
import { afterClose, cli, piWorld, REPO, type PiWorld, until } from "../../support/pi-env.ts";
import { hasTmux, openPane } from "../../support/tmux.ts";

let world: PiWorld;
let harness: HarnessServer;
const bins = new Map<HarnessName, string>();
const skipped = new Map<HarnessName, string>();

beforeAll(async () => {
  world = await piWorld();
  harness = await startHarnessServer();
  // `subagents` on PATH, as an installed one is.
  const bin = join(world.root, "bin");
  symlinkSync(join(REPO, "dist", "subagents"), join(bin, "subagents"));
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
afterAll(async () => {
  await harness?.close();
  await world.close();
});

/** README's snippet in its MCP section: the first fenced block of that language. */
function readmeSnippet(lang: string): string {
  const all = readFileSync(join(REPO, "README.md"), "utf8");
  const from = all.indexOf("## From other harnesses (MCP)");
  const readme = all.slice(from, all.indexOf("\n## ", from + 3));
  const blocks = [...readme.matchAll(/```(\w+)\n([\s\S]*?)```/g)].filter((m) => m[1] === lang).map((m) => m[2]);
  if (!blocks.length) throw new Error(`README has no ${lang} block`);
  return blocks[0];
}

/** Three tasks of 60 KB each, the second ending in an error, and the harness model's script around the call. */
function bigDelegation(marker: string, tool: string) {
  const tasks = ["alpha", "beta", "gamma"].map((n) => ({
    name: `${n}-${marker}`,
    prompt: `${n} ${script(
      n === "beta"
        ? [{ finalize: { status: "ERROR", error: `beta broke ${marker}` } }]
        : [{ text: `${n.toUpperCase()}-${marker}-`.padEnd(100, "."), repeat: 600 }],
    )}`,
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

/** What the model was given after the call: the last request that carried a tool result naming the marker. */
function toolResultSeen(api: "responses" | "anthropic", marker: string): string {
  const req = harness.requests.filter((r) => r.api === api && JSON.stringify(r.messages).includes(`-${marker}`)).at(-1);
  const last = req?.messages.at(-1);
  return last ? messageText(last as never) : "";
}

/** Every task's status line, error and session id, as the records have them. */
async function expectStatusesIn(seen: string, marker: string) {
  const rows = (await cli(world, ["sessions", "--json"])).json.filter((r) => String(r.name).endsWith(marker));
  expect(rows).toHaveLength(3);
  for (const r of rows) {
    const name = String(r.name);
    const line = name.startsWith("beta")
      ? `✗ ${name}: error — beta broke ${marker} (session: ${r.id})`
      : `✓ ${name}: completed (session: ${r.id})`;
    expect(seen, `the model's view lacks "${line}":\n${seen.slice(0, 3000)}`).toContain(line);
  }
}

const serverEnvKeys = ["PI_CODING_AGENT_DIR", "SUBAGENTS_DB", "HOME", "NO_COLOR", "SUBAGENTS_TEST_WORLD"];

test("Codex (README's config, headless `codex exec`): a 3 × 60 KB delegation reaches its model with every task's status, error and session id", async () => {
  const bin = bins.get("codex");
  if (!bin) return console.log(`*** SKIPPING: ${skipped.get("codex")}`);
  const home = join(world.root, "codex-home");
  const env = configureHarness("codex", home, { origin: harness.origin, chatBaseUrl: world.server.baseUrl });
  const toml = (v: string) => JSON.stringify(v);
  const config = join(env.CODEX_HOME, "config.toml");
  // README's block as pasted, then what only this test world needs (its folder and environment).
  writeFileSync(
    config,
    [
      readFileSync(config, "utf8"),
      readmeSnippet("toml").trim(),
      `cwd = ${toml(world.workDir)}`,
      "[mcp_servers.subagents.env]",
      ...serverEnvKeys.map((k) => `${k} = ${toml(world.env[k] ?? "")}`),
      `PATH = ${toml(world.env.PATH)}`,
      "",
    ].join("\n"),
  );
  const marker = `cx${Date.now()}`;
  const { code, events, why } = await runHarness(
    [
      join(bin, "codex"),
      "exec",
      "--json",
      "--skip-git-repo-check",
      bigDelegation(marker, "mcp__subagents__delegate_to_subagents"),
    ],
    { ...QUIET_ENV, ...world.env, ...env, HOME: home, PATH: `${bin}:${world.env.PATH}` },
  );
  expect(code, why).toBe(0);
  const call = events.find((e) => e.type === "item.completed" && e.item?.type === "mcp_tool_call")?.item;
  expect(call, why).toMatchObject({ server: "subagents", tool: "delegate_to_subagents", status: "completed" });
  // Codex gives its model the structured result, cut to its head and tail: the statuses lead it.
  const seen = toolResultSeen("responses", marker);
  expect(seen.length).toBeLessThan(20_000);
  await expectStatusesIn(seen, marker);
  expect(events.some((e) => e.type === "item.completed" && e.item?.text === `harness done ${marker}`)).toBe(true);
}, 300_000);

/** Claude Code's own settings in a HOME of the test world, with README's `claude mcp add` run in it. */
async function claudeHome(bin: string, name: string) {
  const home = join(world.root, name);
  mkdirSync(home, { recursive: true });
  const env = configureHarness("claude-code", home, { origin: harness.origin, chatBaseUrl: world.server.baseUrl });
  // Onboarding done, the key accepted and the folder trusted, as after a person's first start.
  writeFileSync(
    join(home, ".claude.json"),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: "dark",
      customApiKeyResponses: { approved: [env.ANTHROPIC_API_KEY.slice(-20)], rejected: [] },
      projects: { [world.workDir]: { hasTrustDialogAccepted: true } },
    }),
  );
  const all = { ...QUIET_ENV, ...world.env, ...env, HOME: home, PATH: `${bin}:${world.env.PATH}` };
  const line = readmeSnippet("bash")
    .split("\n")
    .find((l) => l.startsWith("claude mcp add"))!
    .replace(/\s+#.*$/, "");
  const add = Bun.spawnSync({ cmd: ["sh", "-c", line], cwd: world.workDir, env: all });
  expect(add.exitCode, `${line}: ${add.stderr}`).toBe(0);
  return all;
}

test("Claude Code (README's `claude mcp add`, headless `claude -p`): a 3 × 60 KB delegation reaches its model with every task's status, error and session id", async () => {
  const bin = bins.get("claude-code");
  if (!bin) return console.log(`*** SKIPPING: ${skipped.get("claude-code")}`);
  const env = await claudeHome(bin, "claude-headless");
  const marker = `cc${Date.now()}`;
  const tool = "mcp__subagents__delegate_to_subagents";
  const { code, events, why } = await runHarness(
    [
      join(bin, "claude"),
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--allowedTools",
      tool,
      "--",
      bigDelegation(marker, tool),
    ],
    env,
  );
  expect(code, why).toBe(0);
  const init = events.find((e) => e.type === "system" && e.subtype === "init");
  expect(init?.mcp_servers, why).toContainEqual(expect.objectContaining({ name: "subagents", status: "connected" }));
  // Claude Code keeps a long result in a file and gives its model the start: the statuses lead it.
  await expectStatusesIn(toolResultSeen("anthropic", marker), marker);
  expect(events.find((e) => e.type === "result")).toMatchObject({
    subtype: "success",
    result: `harness done ${marker}`,
  });
}, 300_000);

/** Processes of this world that a run started (its children and what their commands started: they carry a mark). */
const runProcesses = () => {
  const marked = new Set(processesWithEnv("SUBAGENTS_MARK").map((p) => p.pid));
  return processesWithEnv("SUBAGENTS_TEST_WORLD")
    .filter((p) => p.value === world.root && marked.has(p.pid))
    .map((p) => p.pid);
};

/** Claude Code's terminal UI on the test world, with a prompt typed and sent. */
async function claudeTui(bin: string, name: string, prompt: string, extra: Record<string, string> = {}) {
  const env = await claudeHome(bin, name);
  // tmux gives the pane its server's PATH: the world's (where `subagents` is) is set on the command itself.
  const argv = [
    "env",
    `PATH=${env.PATH}`,
    join(bin, "claude"),
    "--allowedTools",
    "mcp__subagents__delegate_to_subagents",
  ];
  const pane = openPane(argv, {
    cols: 160,
    rows: 48,
    cwd: world.workDir,
    // Its MCP servers connected before it takes the prompt (by default they connect while it already does).
    env: { ...env, MCP_CONNECTION_NONBLOCKING: "false", ...extra },
  });
  try {
    await pane.waitFor((s) => s.includes("❯"), 60_000);
    pane.keys("-l", prompt);
    // Typed text shows before Enter is taken: send Enter until the prompt left the editor.
    await pane.waitFor((s) => s.includes("delegate [[script"), 30_000);
    await until("the prompt sent", async () => {
      pane.keys("Enter");
      await Bun.sleep(300);
      return harness.requests.some((r) => r.messages.some((m) => m.content.includes(prompt.slice(0, 60))));
    });
    return pane;
  } catch (err) {
    // The test's own `finally` never gets this pane: its tmux server ends here.
    pane.close();
    throw err;
  }
}

test("Claude Code's terminal UI: a delegation becomes an MCP task, a child's question is a form answered there, and the model collects the result later", async () => {
  const bin = bins.get("claude-code");
  if (!bin) return console.log(`*** SKIPPING: ${skipped.get("claude-code")}`);
  if (!hasTmux) return console.log("*** SKIPPING: no tmux");
  const marker = `ct${Date.now()}`;
  const tasks = [
    {
      name: `asker-${marker}`,
      prompt: `ask ${script([
        { tool: "ask_parent", args: { question: `Colour for ${marker}?`, options: ["red", "blue"] } },
        { text: `painted ${marker}` },
      ])}`,
    },
    { name: `quiet-${marker}`, prompt: `q ${script([{ text: `quiet ${marker}` }])}` },
  ];
  const prompt = `delegate ${script([
    { tool: "mcp__subagents__delegate_to_subagents", args: { tasks } },
    { text: `started ${marker}` },
    { text: `collected ${marker}` },
  ])}`;
  const pane = await claudeTui(bin, "claude-tui", prompt);
  try {
    // The call came back at once as a task: the model's turn ended while the children run on.
    await pane.waitFor((s) => s.includes(`started ${marker}`) && s.includes("requests your input"), 60_000);
    expect(pane.screen()).toContain(`Sub-agent asker-${marker}`);
    // The person picks "blue" and accepts: each key once the form shows it took the last one.
    pane.keys("Right");
    await pane.waitFor((s) => s.includes("◯ blue"), 10_000);
    pane.keys("Down");
    await pane.waitFor((s) => /❯ ◯ blue/.test(s), 10_000);
    pane.keys("Enter");
    await pane.waitFor((s) => /Choose[^\n]*blue/.test(s) && s.includes("❯ Accept"), 10_000);
    await until("the form accepted", async () => {
      pane.keys("Enter");
      await Bun.sleep(500);
      return !pane.screen().includes("requests your input");
    });
    // Its model gets the task's result when it ends, in a turn of its own.
    const notice = await until(
      () => `the task's result given to Claude's model; the screen:\n${pane.screen()}`,
      () =>
        harness.requests
          .flatMap((r) => r.messages.map((m) => m.content))
          .find((c) => c.includes("<task-notification>") && c.includes(marker)),
    );
    // The answer reached the child; every status and session id is in what the model got.
    const toolTexts = world.server.requests.flatMap((q) =>
      (q.messages ?? []).filter((m) => m.role === "tool").map((m) => messageText(m)),
    );
    expect(toolTexts).toContain("Answer: blue");
    const rows = (await cli(world, ["sessions", "--json"])).json.filter((r) => String(r.name).endsWith(marker));
    for (const r of rows) expect(notice).toContain(`✓ ${r.name}: completed (session: ${r.id})`);
    expect(notice).toContain(`painted ${marker}`);
  } finally {
    pane.close();
  }
}, 300_000);

test("Claude Code's terminal UI with Tasks off: the call's progress line shows under it, and Esc stops its children (recorded cancelled)", async () => {
  const bin = bins.get("claude-code");
  if (!bin) return console.log(`*** SKIPPING: ${skipped.get("claude-code")}`);
  if (!hasTmux) return console.log("*** SKIPPING: no tmux");
  const marker = `ce${Date.now()}`;
  const never = join(world.root, `never-${marker}`);
  const tasks = [
    {
      name: `held-${marker}`,
      prompt: `hold ${script([{ tool: "bash", args: { command: `until [ -e ${never} ]; do sleep 0.1; done` } }])}`,
    },
  ];
  const prompt = `delegate ${script([{ tool: "mcp__subagents__delegate_to_subagents", args: { tasks } }, { text: "never" }])}`;
  const pane = await claudeTui(bin, "claude-esc", prompt, { CLAUDE_CODE_DISABLE_MCP_TASKS: "1" });
  try {
    await pane.waitFor((s) => /Sub-agents: 1 running, 0 done · \d+s · held-/.test(s), 60_000);
    const id = await until(
      `held-${marker} running`,
      async () =>
        (await cli(world, ["sessions", "--running", "--json"])).json.find((r) => r.name === `held-${marker}`)?.id as
          | string
          | undefined,
    );
    pane.keys("Escape");
    const row = await until(`held-${marker} recorded as ended`, async () => {
      const s = (await cli(world, ["session", id, "--json"])).json[0];
      return s?.status !== "running" ? s : undefined;
    });
    expect(row.status).toBe("error");
    expect(row.transcript).toContain("Cancelled");
    await until(
      () => `no process of the task left (left: ${runProcesses()})`,
      () => runProcesses().length === 0,
    );
  } finally {
    pane.close();
  }
}, 300_000);
