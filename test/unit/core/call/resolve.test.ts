// The one step that resolves a task (src/core/call/resolve.ts): every task field has a row saying where its value
// comes from, and the rows' orders hold — the task over the front over its agent file over a resumed run over the
// settings; the sandbox only adds up; what one value makes of another (a structured result, another harness's CLI,
// a cache-true fork) is decided there too.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RESOLUTION, resolveTask } from "../../../../src/core/call/resolve.ts";
import type { CallDefaults, CallTask } from "../../../../src/core/call/request.ts";
import { parseProfile, type Profile } from "../../../../src/core/profiles/profile.ts";
import type { Engine } from "../../../../src/core/run/engine.ts";
import { defaultSettings, type Settings } from "../../../../src/core/settings.ts";
import type { SessionRecord } from "../../../../src/core/store/store-types.ts";
import { TASK_FIELDS } from "../../../../src/core/task-fields.ts";
import { createBunHost } from "../../../../src/host/bun.ts";
import { bunDbOpener } from "../../../../src/host/sqlite-bun.ts";

// A real host over an empty agent dir: no user models, no saved trust, and folders that do not exist stay as written.
const host = createBunHost(bunDbOpener(Database));
const agentDir = mkdtempSync(join(tmpdir(), "resolve-"));
afterAll(() => rmSync(agentDir, { recursive: true, force: true }));

const agent = (front: string, name = "scout"): Profile =>
  parseProfile(`---\nname: ${name}\ndescription: d\n${front}---\nYou look.\n`, `/a/${name}.md`, "user").profile!;

function resolve(
  task: Partial<CallTask>,
  o: { front?: Partial<CallDefaults>; agents?: Profile[]; settings?: Partial<Settings>; prior?: SessionRecord } = {},
) {
  const engine = {
    profiles: new Map((o.agents ?? []).map((p) => [p.name, p])),
    settings: { ...defaultSettings(), ...o.settings },
    call: {},
    host,
    agentDir,
    caches: {},
  } as unknown as Engine;
  return resolveTask(
    engine,
    { name: "t", prompt: "p", ...task },
    { cwd: "/w", ...o.front },
    o.prior ?? null,
    () => "new-id",
  );
}

test("every task field has a row: where its value comes from, in order", () => {
  const rows = new Set(Object.keys(RESOLUTION));
  for (const field of TASK_FIELDS) expect(rows.has(field), `task field "${field}" has no row in RESOLUTION`).toBe(true);
  for (const [name, row] of Object.entries(RESOLUTION))
    expect(row.from.length, `row "${name}" names no source`).toBeGreaterThan(0);
});

test("a task that names no agent runs on pi's defaults, with every value decided", () => {
  expect(resolve({})).toEqual({
    name: "t",
    prompt: "p",
    cwd: "/w",
    agent: "default",
    modelChoice: {},
    timeoutSec: 600,
    sessionId: "new-id",
    runner: "local",
    sandbox: false,
    runtime: "pi",
    context: "fresh",
    finalize: "optional",
    keepProcesses: false,
    budget: {},
    notes: [],
  });
  // Plain data: what a background supervisor is handed as JSON comes back the same.
  const r = resolve({ gate: "make test", maxTurns: 3 } as Partial<CallTask>);
  expect(JSON.parse(JSON.stringify(r))).toEqual(r);
});

test("the task over the front over its agent file over the settings; budgets key by key", () => {
  const scout = agent("timeout: 30\nmaxTurns: 9\nmaxCost: 2\nkeepProcesses: true\nmodel: a/b\n");
  expect(resolve({ profile: "scout" }, { agents: [scout] })).toMatchObject({
    agent: "scout",
    timeoutSec: 30,
    budget: { maxTurns: 9, maxCost: 2 },
    keepProcesses: true,
    model: "a/b",
    // Resolved as its author meant it, here: a provider this machine has no credentials for runs pi's default.
    modelChoice: { model: null, warning: expect.stringContaining('model "a/b" needs provider "a"') },
  });
  const r = resolve(
    { timeout: 5, budget: { maxTurns: 1 } },
    { agents: [scout], front: { profile: "scout", timeout: 7, model: "c/d", budget: { maxTokens: 10, maxTurns: 2 } } },
  );
  expect(r).toMatchObject({
    agent: "scout",
    timeoutSec: 5,
    model: "c/d",
    budget: { maxTurns: 1, maxTokens: 10, maxCost: 2 },
  });
  expect(resolve({}, { settings: { timeout: 42 } }).timeoutSec).toBe(42);
});

test("the settings' sandbox cannot be turned off by a task or an agent file; the task's runner wins", () => {
  const off = agent("sandbox: false\nrunner: docker\n");
  expect(resolve({ profile: "scout" }, { agents: [off], settings: { sandbox: "on" } }).sandbox).toBe(true);
  expect(resolve({}, { agents: [agent("sandbox: true\n")], front: { profile: "scout" } }).sandbox).toBe(true);
  expect(resolve({}).sandbox).toBe(false);
  expect(resolve({ profile: "scout", runner: "slurm" }, { agents: [off] }).runner).toBe("slurm");
  expect(resolve({ profile: "scout" }, { agents: [off] }).runner).toBe("docker");
  expect(resolve({}, { settings: { runner: "docker" } }).runner).toBe("docker");
});

test("a resumed session runs as its last run did: its agent, its worktree, where it ran and its sandbox", () => {
  const run = (o: Record<string, unknown>) => ({ id: 1, status: "completed", ...o });
  const prior = {
    id: "s1",
    agent: "scout",
    runs: [run({ runner: "docker", sandbox: true }), run({ isolation: { base: "x" } })],
  } as unknown as SessionRecord;
  const r = resolve({ resume: "s1" }, { agents: [agent("")], prior });
  expect(r).toMatchObject({ agent: "scout", sessionId: "s1", isolation: "worktree", runner: "docker", sandbox: true });
  expect(resolve({ resume: "s1", runner: "local" }, { agents: [agent("")], prior }).runner).toBe("local");
  // A resumed task continues its own conversation, never a copy of the parent's.
  expect(resolve({ resume: "s1", context: "fork" }, { agents: [agent("")], prior }).context).toBe("fresh");
});

test("a gate: the task's command with the agent's timeout; none without a command", () => {
  const gated = agent("gate: make test\ngateTimeout: 9\n");
  expect(resolve({ profile: "scout", gateRetries: 0 }, { agents: [gated] }).gate).toEqual({
    command: "make test",
    timeoutSec: 9,
    retries: 0,
  });
  expect(resolve({ gate: "true" }).gate).toEqual({ command: "true", timeoutSec: 300, retries: 2 });
  expect(resolve({}).gate).toBeUndefined();
});

test("finalize: a structured result requires it; another harness's CLI relaxes it and says what it cannot do", () => {
  const schema = { type: "object" };
  expect(resolve({ outputSchema: schema }).finalize).toBe("required");
  expect(resolve({}, { front: { finalize: "required" } }).finalize).toBe("required");
  expect(
    resolve({ profile: "scout" }, { agents: [agent("finalize: false\n")], front: { finalize: "required" } }).finalize,
  ).toBe("off");
  const codex = resolve({ runtime: "codex", outputSchema: schema, gate: "true" });
  expect(codex.finalize).toBe("optional");
  expect(codex.notes.join("\n")).toContain("acceptance gate runs inside a pi child: not run on codex");
  expect(codex.notes.join("\n")).toContain("outputSchema");
  expect(codex.notes.join("\n")).toContain('finalize contract ("required")');
});

test("a cache-true fork answers in plain text unless a structured result needs the tool", () => {
  const engine = {
    profiles: new Map(),
    settings: defaultSettings(),
    call: { parentPrompt: { cwd: "/w", systemPrompt: "sys", tools: [] } },
    host,
    agentDir,
    caches: {},
  } as unknown as Engine;
  const run = (t: Partial<CallTask>) =>
    resolveTask(
      engine,
      { name: "t", prompt: "p", context: "fork", ...t },
      { cwd: "/w", finalize: "required" },
      null,
      () => "id",
    );
  expect(run({})).toMatchObject({ context: "fork", cacheTrueFork: true, finalize: "optional" });
  expect(run({ outputSchema: { type: "object" } })).toMatchObject({ cacheTrueFork: true, finalize: "required" });
  // Another folder (an isolated task's worktree too) is no cache-true fork: the prompt names the folder.
  expect(run({ isolation: "worktree" }).cacheTrueFork).toBeUndefined();
  expect(run({ cwd: "/elsewhere" }).cacheTrueFork).toBeUndefined();
});
