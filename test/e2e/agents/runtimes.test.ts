// End to end: other harnesses' REAL CLIs (from npm, cached in node_modules/.cache/harness-clis) run as children
// (`runtime:` in an agent file, `--runtime`), against scripted servers on 127.0.0.1 for their own APIs:
// Anthropic Messages (Claude Code), OpenAI Responses (Codex), Gemini streamGenerateContent (Gemini CLI) and
// OpenAI chat (opencode). Their streams must feed the same records, --json events, usage, timeouts and kills.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script, type ScriptStep } from "../../../src/scripted/model-server.ts";
import { startHarnessServer, type HarnessServer } from "../../../src/scripted/harness-servers.ts";
import { cli, piWorld, summaryOf, type PiWorld, taskWhy } from "../../support/pi-env.ts";
import { ensureEngine } from "../../support/engines.ts";
import { gitIn, makeRepo } from "../../support/git-repo.ts";
import { configureHarness, ensureHarnessCli, QUIET_ENV, type HarnessName } from "../../support/harness-clis.ts";

type Case = {
  tool: string;
  shownAs?: string;
  args: (marker: string) => Record<string, unknown>;
  model: string;
  turns: number;
  cost: boolean;
  requests: (h: HarnessServer, w: PiWorld) => string[];
};
const seen = (req: unknown) => JSON.stringify(req);
const CASES: Record<HarnessName, Case> = {
  "claude-code": {
    tool: "Bash",
    args: (m) => ({ command: `echo ${m}`, description: "echo" }),
    model: "claude-sonnet-4-5",
    turns: 2,
    cost: true,
    requests: (h) => h.requests.filter((r) => r.api === "anthropic").map(seen),
  },
  codex: {
    tool: "exec_command",
    shownAs: "bash",
    args: (m) => ({ cmd: `echo ${m}` }),
    model: "gpt-scripted",
    turns: 1,
    cost: false,
    requests: (h) => h.requests.filter((r) => r.api === "responses").map(seen),
  },
  gemini: {
    tool: "run_shell_command",
    args: (m) => ({ command: `echo ${m}` }),
    model: "gemini-2.5-flash",
    turns: 2,
    cost: false,
    requests: (h) => h.requests.filter((r) => r.api === "gemini").map(seen),
  },
  opencode: {
    tool: "bash",
    args: (m) => ({ command: `echo ${m}`, description: "echo" }),
    model: "scripted/fake-model",
    turns: 2,
    cost: false,
    requests: (_h, w) => w.server.requests.map((r) => seen(r.messages)),
  },
};

let world: PiWorld;
let harness: HarnessServer;
const bins = new Map<HarnessName, string>();
const skipped = new Map<HarnessName, string>();
const started = Date.now();

beforeAll(async () => {
  world = await piWorld();
  world.setSubagentSettings({ extendTimeoutDebounce: 1 });
  harness = await startHarnessServer();
  // Installed side by side (first run only: ~30 s; later runs find them in the cache).
  const names = Object.keys(CASES) as HarnessName[];
  const got = await Promise.all(names.map((n) => ensureHarnessCli(n)));
  for (const [i, name] of names.entries()) {
    if ("skip" in got[i]) {
      skipped.set(name, got[i].skip);
      console.log(`*** SKIPPING the ${name} runtime tests: ${got[i].skip}`);
    } else bins.set(name, got[i].binDir);
  }
}, 600_000);
afterAll(async () => {
  // Anything a CLI asked our server for that is not scripted (it would have gone to the vendor's API).
  if (harness?.unknown.length) console.log(`unscripted requests: ${harness.unknown.join(", ")}`);
  await harness?.close();
  await world?.close();
  console.log(`runtime tests: ${((Date.now() - started) / 1000).toFixed(1)}s`);
});

/** The environment a user of that CLI has: its program on PATH and its own configuration (in the test HOME). */
function envFor(name: HarnessName): Record<string, string> {
  return {
    ...QUIET_ENV,
    ...configureHarness(name, world.root, { origin: harness.origin, chatBaseUrl: world.server.baseUrl }),
    PATH: `${bins.get(name)}:${world.env.PATH}`,
  };
}

function agentFile(name: string, fields: Record<string, string>, body: string): void {
  const dir = join(world.agentDir, "agents");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `${name}.md`),
    `---\nname: ${name}\ndescription: test agent\n${Object.entries(fields)
      .map(([k, v]) => `${k}: ${v}`)
      .join("\n")}\n---\n${body}\n`,
  );
}

/** Processes still running with this test's HOME in their environment (children of a stopped run must be gone). */
function leftovers(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`HOME=${world.root}`))
        out.push(Number(pid));
    } catch {
      // gone, or not ours
    }
  }
  return out;
}

for (const name of Object.keys(CASES) as HarnessName[]) {
  const c = CASES[name];
  describe(`runtime ${name}`, () => {
    test("an agent file's runtime runs the real CLI: tool call, text, usage, --json events, the agent's prompt", async () => {
      if (!bins.has(name)) return console.log(`*** SKIPPING: ${skipped.get(name)}`);
      const marker = `mk-${name}-${Date.now()}`;
      agentFile(`rt-${name}`, { runtime: name, model: c.model }, `You are the scripted agent AGENTPROMPT-${marker}.`);
      const steps: ScriptStep[] = [{ tool: c.tool, args: c.args(marker) }, { text: `finished ${marker}` }];
      const t0 = Date.now();
      const r = await cli(world, ["run", `rt-${name}`, `Do it ${script(steps)}`, "--json"], { env: envFor(name) });
      const secs = (Date.now() - t0) / 1000;
      console.log(`${name}: one run with a tool call took ${secs.toFixed(1)}s`);
      expect(r.stderr).not.toContain("internal error");
      const [t] = summaryOf(r.json);
      expect({ status: t.status, error: t.error }).toEqual({ status: "completed", error: undefined });
      expect(t.output).toBe(`finished ${marker}`);
      expect(t.usage.turns).toBe(c.turns);
      expect(t.usage.input).toBeGreaterThan(0);
      expect(t.usage.output).toBeGreaterThan(0);
      if (c.cost) expect(t.usage.cost).toBeGreaterThan(0);
      // Its tool really ran (its output went back to the model), and the window/--json saw the call.
      const reqs = c.requests(harness, world);
      expect(
        reqs.some((q) => q.includes(`${marker}\\n`) || q.includes(`${marker}"`) || q.includes(`${marker}\\\\n`)),
      ).toBe(true);
      expect(r.json.some((e) => e.type === "tool_start" && e.tool === (c.shownAs ?? c.tool))).toBe(true);
      expect(r.json.some((e) => e.type === "tool_end")).toBe(true);
      // The agent's prompt reached the model; what the runtime cannot do is said.
      expect(reqs.some((q) => q.includes(`AGENTPROMPT-${marker}`))).toBe(true);
      expect(t.warnings.join("\n")).toContain("no steering");
      // The record has the transcript: `output` prints the result.
      const out = await cli(world, ["output", t.sessionId]);
      expect(out.stdout.trim()).toBe(`finished ${marker}`);
    }, 120_000);

    test("a model error ends the run as an error with the CLI's message", async () => {
      if (!bins.has(name)) return console.log(`*** SKIPPING: ${skipped.get(name)}`);
      const r = await cli(
        world,
        [
          "run",
          "default",
          `Fail ${script([{ status: 400, message: "scripted bad request" }])}`,
          "--json",
          "--runtime",
          name,
          "--model",
          c.model,
        ],
        { env: envFor(name) },
      );
      const [t] = summaryOf(r.json);
      expect(t.status).toBe("error");
      expect(t.error).toContain("scripted bad request");
      expect(r.code).not.toBe(0);
    }, 120_000);

    test("a timeout stops the CLI and everything it started", async () => {
      if (!bins.has(name)) return console.log(`*** SKIPPING: ${skipped.get(name)}`);
      const t0 = Date.now();
      const r = await cli(
        world,
        [
          "run",
          "default",
          `Hang ${script([{ text: "late", delayMs: 60_000 }])}`,
          "--json",
          "--runtime",
          name,
          "--model",
          c.model,
          "--timeout",
          "1",
        ],
        { env: { ...envFor(name) } },
      );
      const [t] = summaryOf(r.json);
      expect(t.errorCode).toBe("SUBAGENT_TIMEOUT");
      expect(Date.now() - t0).toBeLessThan(40_000);
      console.log(`${name}: a 1s timeout ended the run after ${((Date.now() - t0) / 1000).toFixed(1)}s`);
      expect(leftovers()).toEqual([]);
    }, 120_000);
  });
}

test("a runtime whose CLI is not installed is a clear error naming its npm package; nothing runs", async () => {
  const r = await cli(world, ["run", "default", "hello", "--json", "--runtime", "claude-code"], {
    env: { PATH: "/usr/bin:/bin" },
  });
  const [t] = summaryOf(r.json);
  expect(t.errorCode).toBe("RUNTIME_MISSING");
  expect(t.error).toContain("npm install -g @anthropic-ai/claude-code");
}, 60_000);

test("--runtime and the runtime field refuse an unknown runtime by name", async () => {
  const r = await cli(world, ["run", "default", "hello", "--runtime", "cursor"]);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain("--runtime must be one of pi, claude-code, codex, gemini, opencode");
  agentFile("rt-bad", { runtime: "cursor" }, "x");
  const p = await cli(world, ["run", "rt-bad", "hello", "--json"]);
  expect(p.stdout + p.stderr).toContain('field "runtime" must be one of');
}, 60_000);

test("--sandbox: the CLI runs in bubblewrap with its own folder (~/.claude) writable, the rest of home hidden", async () => {
  if (!bins.has("claude-code")) return console.log(`*** SKIPPING: ${skipped.get("claude-code")}`);
  // On a fresh machine no other file may have installed bubblewrap yet: this test needs it as much as theirs.
  const noBwrap = ensureEngine("bwrap");
  if (noBwrap) return console.log(noBwrap);
  const marker = `sbx-${Date.now()}`;
  mkdirSync(join(world.root, ".claude", "projects"), { recursive: true });
  const before = new Set(readdirSync(join(world.root, ".claude", "projects"), { recursive: true }) as string[]);
  const steps: ScriptStep[] = [
    {
      tool: "Bash",
      args: {
        command: `echo ${marker} > "$HOME/outside-${marker}"; echo ${marker} > inside-${marker}; echo wrote`,
        description: "w",
      },
    },
    { text: `done ${marker}` },
  ];
  const r = await cli(
    world,
    [
      "run",
      "default",
      `Write ${script(steps)}`,
      "--json",
      "--runtime",
      "claude-code",
      "--model",
      "claude-sonnet-4-5",
      "--sandbox",
    ],
    { env: envFor("claude-code") },
  );
  const [t] = summaryOf(r.json);
  expect({ status: t.status, error: t.error }).toEqual({ status: "completed", error: undefined });
  expect(readFileSync(join(world.workDir, `inside-${marker}`), "utf8").trim()).toBe(marker);
  expect(readdirSync(world.root).includes(`outside-${marker}`)).toBe(false);
  // Its session transcript was written into the real ~/.claude (its own folder came back, writable).
  const after = (readdirSync(join(world.root, ".claude", "projects"), { recursive: true }) as string[]).filter(
    (f) => !before.has(f) && f.endsWith(".jsonl"),
  );
  expect(after.length).toBeGreaterThan(0);
}, 120_000);

test("one delegate call, three runtimes (task field): Claude Code isolated in a worktree, Codex, and pi side by side", async () => {
  const missing = (["claude-code", "codex"] as const).filter((n) => !bins.has(n));
  if (missing.length) return console.log(`*** SKIPPING: ${missing.map((n) => skipped.get(n)).join("; ")}`);
  const repo = makeRepo(world.root, join(world.root, `repo-${Date.now()}`), false);
  const write: ScriptStep[] = [
    { tool: "Bash", args: { command: "echo from-claude > claude.txt", description: "w" } },
    { text: "claude wrote" },
  ];
  const tasks = {
    tasks: [
      { name: "cc", prompt: `Write ${script(write)}`, runtime: "claude-code", isolation: "worktree" },
      { name: "cx", prompt: `Say ${script([{ text: "codex says hi" }])}`, runtime: "codex" },
      { name: "pi", prompt: `Say ${script([{ text: "pi says hi" }])}` },
    ],
  };
  const env = {
    ...envFor("claude-code"),
    ...envFor("codex"),
    PATH: `${bins.get("claude-code")}:${bins.get("codex")}:${world.env.PATH}`,
  };
  const r = await cli(world, ["delegate", "--tasks", "-", "--json"], { cwd: repo, stdin: JSON.stringify(tasks), env });
  const byName = Object.fromEntries(summaryOf(r.json).map((t): [string, Record<string, any>] => [t.name ?? t.task, t]));
  expect(Object.values(byName).map((t) => t.status)).toEqual(["completed", "completed", "completed"]);
  expect([byName.cc.output, byName.cx.output, byName.pi.output]).toEqual([
    "claude wrote",
    "codex says hi",
    "pi says hi",
  ]);
  // Claude Code wrote in its worktree: the change is on its branch, not in the user's tree.
  expect(gitIn(world.root, repo, "show", `${byName.cc.isolation.branch}:claude.txt`)).toBe("from-claude\n");
  expect(gitIn(world.root, repo, "status", "--porcelain")).toBe("");
  expect(byName.pi.warnings ?? []).not.toContain(expect.stringContaining("no steering"));
}, 180_000);

test("resuming a Claude Code session replays its transcript into a new run", async () => {
  if (!bins.has("claude-code")) return console.log(`*** SKIPPING: ${skipped.get("claude-code")}`);
  const marker = `resume-${Date.now()}`;
  const first = await cli(
    world,
    [
      "run",
      "default",
      `Remember ${marker} ${script([{ text: `noted ${marker}` }])}`,
      "--json",
      "--runtime",
      "claude-code",
    ],
    { env: envFor("claude-code") },
  );
  const [a] = summaryOf(first.json);
  expect(a.status, taskWhy(a)).toBe("completed");
  const second = await cli(
    world,
    [
      "run",
      "default",
      `What was it? ${script([{ text: "it was noted" }])}`,
      "--json",
      "--runtime",
      "claude-code",
      "--session",
      a.sessionId,
    ],
    { env: envFor("claude-code") },
  );
  const [b] = summaryOf(second.json);
  expect(b.status, taskWhy(b)).toBe("completed");
  expect(b.sessionId).toBe(a.sessionId);
  const last = harness.requests.filter((q) => q.api === "anthropic").at(-1)!;
  expect(JSON.stringify(last.messages)).toContain(`noted ${marker}`);
}, 120_000);

test("budgets apply to what the CLI reports: Claude Code's input tokens per message stop it at --max-tokens", async () => {
  if (!bins.has("claude-code")) return console.log(`*** SKIPPING: ${skipped.get("claude-code")}`);
  const marker = `budget-${Date.now()}`;
  const steps: ScriptStep[] = [
    { tool: "Bash", args: { command: `echo ${marker}-1`, description: "1" } },
    { tool: "Bash", args: { command: `echo ${marker}-2`, description: "2" } },
    { text: "never reached" },
  ];
  const r = await cli(
    world,
    ["run", "default", `Spend ${script(steps)}`, "--json", "--runtime", "claude-code", "--max-tokens", "100"],
    { env: envFor("claude-code") },
  );
  const [t] = summaryOf(r.json);
  expect(t.errorCode).toBe("BUDGET_EXCEEDED");
  expect(t.error).toContain("maxTokens");
  expect(t.output).not.toBe("never reached");
  expect(leftovers()).toEqual([]);
}, 120_000);

test("what only a pi child can do is said, not dropped: a Codex child with an acceptance gate fails GATE_FAILED, saying why", async () => {
  if (!bins.has("codex")) return console.log(`*** SKIPPING: ${skipped.get("codex")}`);
  const r = await cli(
    world,
    ["delegate", `Say ${script([{ text: "hi" }])}`, "--json", "--runtime", "codex", "--gate", "false"],
    { env: envFor("codex") },
  );
  const [t] = summaryOf(r.json);
  // The gate could not run, so the task cannot pass it: never a silent success.
  expect(t.errorCode).toBe("GATE_FAILED");
  expect(t.output).toBe("hi");
  expect(t.warnings).toContain("the acceptance gate runs inside a pi child: not run on codex");
}, 120_000);

test("an agent's tool list reaches Claude Code: read-only offers only its read tools, a deny list removes Bash", async () => {
  if (!bins.has("claude-code")) return console.log(`*** SKIPPING: ${skipped.get("claude-code")}`);
  const toolsOffered = async (agent: string, fields: Record<string, string>) => {
    agentFile(agent, { runtime: "claude-code", ...fields }, "You look around.");
    const before = harness.requests.length;
    const r = await cli(world, ["run", agent, `Look ${script([{ text: `looked ${agent}` }])}`, "--json"], {
      env: envFor("claude-code"),
    });
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t)).toBe("completed");
    const req = harness.requests.slice(before).find((q) => q.api === "anthropic") as unknown as { tools?: string[] };
    // Claude Code's placeholder for tools it loads on demand is no tool of its own.
    return {
      tools: (req.tools ?? []).filter((n) => n !== "DeferredToolPlaceholder").sort(),
      warnings: (t.warnings ?? []) as string[],
    };
  };
  const readonly = await toolsOffered("cc-readonly", { readonly: "true" });
  expect(readonly.tools).toEqual(["Glob", "Grep", "Read"]);
  expect(readonly.warnings.join("\n")).not.toContain("runs with its own tools");
  const noBash = await toolsOffered("cc-nobash", { disallowedTools: "Bash" });
  expect(noBash.tools).not.toContain("Bash");
  expect(noBash.tools).toContain("Read");
  const odd = await toolsOffered("cc-odd", { tools: "read, web_search" });
  expect(odd.tools).toEqual(["Read"]);
  expect(odd.warnings).toContain("Claude Code has no web_search: left out of this run");
}, 180_000);
