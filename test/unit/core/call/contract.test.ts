// The call module's contract (src/core/call/): the same call given to any front — `subagents delegate` (arguments
// or --tasks), `subagents flow`, `subagents run`, pi's delegate_to_subagents (parameters or a saved workflow) and
// pi's subagent — becomes the same resolved tasks, and the same bad call gets the same refusal {code, message}.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { prepareCall, type CallFront } from "../../../../src/core/call/prepare.ts";
import { delegateToolRequest, type CallRequest, type Refusal } from "../../../../src/core/call/request.ts";
import { parseDelegateParams } from "../../../../src/core/delegate-input.ts";
import { realClock } from "../../../../src/core/host.ts";
import { discoverProfiles } from "../../../../src/core/profiles/profile-discovery.ts";
import { loadSettings } from "../../../../src/core/settings.ts";
import { Store } from "../../../../src/core/store/store.ts";
import { CapGuard } from "../../../../src/core/run/cap-guard.ts";
import { createEngine, type Engine } from "../../../../src/core/run/engine.ts";
import type { ResolvedTask } from "../../../../src/core/run/task-types.ts";
import { createBunHost } from "../../../../src/host/bun.ts";
import { bunDbOpener } from "../../../../src/host/sqlite-bun.ts";
import { parse } from "../../../../src/cli/flags/args.ts";
import { callDefaults } from "../../../../src/cli/flags/call-flags.ts";
import { callFlags, cliRequest, DELEGATE_OPTIONS, tasksDocument } from "../../../../src/cli/commands/delegate.ts";
import { runRequest } from "../../../../src/cli/commands/run.ts";
import { subagentRequest } from "../../../../src/core/call/subagent-call.ts";
import { withWorkflow } from "../../../../src/core/call/workflow.ts";

const root = mkdtempSync(join(tmpdir(), "call-contract-"));
const agentDir = join(root, "agent");
const cwd = join(root, "work");
const other = join(root, "other");
for (const d of [join(agentDir, "agents"), join(agentDir, "workflows"), cwd, other]) mkdirSync(d, { recursive: true });
writeFileSync(
  join(agentDir, "agents", "scout.md"),
  "---\nname: scout\ndescription: looks around\n---\nYou look around.\n",
);
afterAll(() => rmSync(root, { recursive: true, force: true }));
// Links a task's folder may be written through: to the home, to `/`, and out of the work folder to a sibling.
symlinkSync(homedir(), join(root, "home-link"));
symlinkSync("/", join(root, "slash"));
symlinkSync(other, join(cwd, "out"));
symlinkSync(cwd, join(root, "work-link"));

function engine(settings: Record<string, unknown> = {}, db: { readOnly?: boolean; freeBytes?: number } = {}): Engine {
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ subagents: settings }));
  const host = createBunHost(bunDbOpener(Database));
  const file = join(root, `db-${Math.random().toString(16).slice(2)}.sqlite`);
  const opened = host.openDb(file);
  const store = new Store(opened, {
    isAlive: () => false,
    file,
    ...(db.freeBytes !== undefined ? { freeBytes: () => db.freeBytes! } : {}),
  });
  // A database this process may read but not write (SQLite then answers writes as for a read-only file).
  if (db.readOnly) opened.exec("PRAGMA query_only = 1");
  let n = 0;
  // Session ids count up from 1 in each call, so two fronts' resolved tasks compare field by field.
  store.newSessionId = () => `session-${++n}`;
  const reset = () => {
    n = 0;
  };
  const e: Engine & { reset?: () => void } = createEngine({
    host,
    clock: realClock,
    store,
    settings: loadSettings(host, { agentDir, cwd }).settings,
    profiles: discoverProfiles(host, { cwd, agentDir }).profiles,
    agentDir,
    piCommand: ["pi"],
    piEnv: {},
    depth: 0,
  });
  e.reset = reset;
  return e;
}

/** The caps of the last front: a call prepared under them is not admitted yet (the runner admits it). */
let caps = new CapGuard(undefined, "this call");

/** A front that can give everything the checks may ask for except a conversation to fork. */
const front = (): CallFront => {
  caps = new CapGuard(undefined, "this call");
  return { caps };
};

type Prepared = { inputs: readonly ResolvedTask[]; refused: readonly (Refusal | undefined)[] } | { refusal: Refusal };

async function prepared(e: Engine, request: CallRequest): Promise<Prepared> {
  (e as { reset?: () => void }).reset?.();
  const p = await prepareCall(e, request, front());
  return "refusal" in p ? p : { inputs: p.call.tasks, refused: p.call.refused };
}

const cliDelegate = (argv: string[]) => {
  const { values, positionals } = parse("delegate", argv, DELEGATE_OPTIONS);
  const v = { ...values, cwd: values.cwd ?? cwd };
  return cliRequest(callFlags(v, v.cwd), parseDelegateParams(tasksDocument(v, positionals)));
};
const cliFlow = (doc: Record<string, unknown>, argv: string[] = []) => {
  const { values } = parse("flow", argv, DELEGATE_OPTIONS);
  return cliRequest(callFlags({ ...values, cwd }, cwd), parseDelegateParams(doc));
};
const piTool = (doc: unknown) => delegateToolRequest(parseDelegateParams(doc), cwd);
const piWorkflow = async (e: Engine, spec: string) =>
  delegateToolRequest(
    parseDelegateParams(await withWorkflow({ workflow: spec }, { cwd, hasUI: false }, async () => e)),
    cwd,
  );

const EVERY_FIELD = {
  tasks: [
    {
      name: "first",
      prompt: "look at the code",
      cwd: other,
      profile: "scout",
      timeout: 90,
      files: ["README.md", { path: "src/a.ts", head: 10 }],
      isolation: "worktree",
      maxTurns: 4,
      maxTokens: 5000,
      maxCost: 0.5,
      gate: "true",
      gateTimeout: 30,
      gateRetries: 2,
      outputSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
      sandbox: true,
      keepProcesses: true,
      runner: "local",
      runtime: "codex",
    },
    { name: "second", prompt: "use {{first}}", after: ["first"], runtime: "claude-code" },
  ],
};

test("a tasks document with every field gives the same resolved tasks through every front, and every field reaches them", async () => {
  // Every field a task may have is in this document, but `resume` and `context` (their refusals are checked below).
  const { TASK_FIELDS } = await import("../../../../src/core/task-fields.ts");
  const used = new Set(EVERY_FIELD.tasks.flatMap((t) => Object.keys(t)));
  expect([...used, "resume", "context"].sort()).toEqual([...TASK_FIELDS].sort());
  const e = engine();
  const file = join(root, "every.json");
  writeFileSync(file, JSON.stringify(EVERY_FIELD));
  writeFileSync(join(agentDir, "workflows", "every.json"), JSON.stringify(EVERY_FIELD));
  const fronts: Record<string, CallRequest> = {
    "subagents delegate --tasks": cliDelegate(["--tasks", file]),
    "subagents flow": cliFlow(EVERY_FIELD),
    delegate_to_subagents: piTool(EVERY_FIELD),
    "delegate_to_subagents workflow": await piWorkflow(e, "every"),
  };
  const results = await Promise.all(Object.values(fronts).map((r) => prepared(e, r)));
  const [reference] = results;
  if (!("inputs" in reference)) throw new Error(`refused: ${reference.refusal.message}`);
  for (const [i, name] of Object.keys(fronts).entries()) expect(results[i], name).toEqual(reference);
  const [first, second] = reference.inputs;
  // codex and Claude Code cannot give what only a pi child does: the contract is relaxed, and said.
  const { notes, ...firstRest } = first;
  expect(firstRest).toEqual({
    name: "first",
    prompt: "look at the code",
    cwd: other,
    agent: "scout",
    modelChoice: {},
    timeoutSec: 90,
    files: ["README.md", { path: "src/a.ts", head: 10 }],
    sessionId: "session-1",
    context: "fresh",
    finalize: "optional",
    isolation: "worktree",
    budget: { maxTurns: 4, maxTokens: 5000, maxCost: 0.5 },
    gate: { command: "true", timeoutSec: 30, retries: 2 },
    outputSchema: EVERY_FIELD.tasks[0].outputSchema,
    keepProcesses: true,
    sandbox: true,
    runner: "local",
    runtime: "codex",
  });
  expect(notes.slice(-3)).toEqual([
    "the acceptance gate runs inside a pi child: not run on codex",
    "a structured result (outputSchema) needs a pi child: the codex child's answer is plain text",
    'the finalize contract ("required") needs a pi child: the codex child\'s last message is its result',
  ]);
  expect(second).toEqual({
    name: "second",
    prompt: "use {{first}}",
    cwd,
    agent: "default",
    modelChoice: {},
    sessionId: "session-2",
    timeoutSec: 600,
    context: "fresh",
    finalize: "optional",
    keepProcesses: false,
    budget: {},
    runner: "local",
    sandbox: false,
    after: ["first"],
    runtime: "claude-code",
    notes: ["runs on Claude Code: no steering, no subagent_finalize, resume replays the transcript"],
  });
});

test("the CLI's flags are the call's defaults: delegate's and run's flags give one task the same ResolvedTask as the tool's fields", async () => {
  const e = engine();
  const flags = [
    "--runtime",
    "codex",
    "--sandbox",
    "--runner",
    "local",
    "--timeout",
    "45",
    "--isolation",
    "worktree",
    "--gate",
    "true",
    "--gate-retries",
    "1",
    "--max-turns",
    "3",
    "--profile",
    "scout",
  ];
  const viaDelegate = await prepared(e, cliDelegate(["--name", "scout", "say hi", ...flags]));
  const { values } = parse("run", flags, DELEGATE_OPTIONS);
  const viaRun = await prepared(e, runRequest("scout", "say hi", callDefaults("run", cwd, values), {}));
  const viaTool = await prepared(
    e,
    piTool({
      tasks: [
        {
          name: "scout",
          prompt: "say hi",
          profile: "scout",
          runtime: "codex",
          sandbox: true,
          runner: "local",
          timeout: 45,
          isolation: "worktree",
          gate: "true",
          gateRetries: 1,
          maxTurns: 3,
        },
      ],
    }),
  );
  expect(viaRun).toEqual(viaDelegate);
  expect(viaTool).toEqual(viaDelegate);
  if (!("inputs" in viaTool)) throw new Error(viaTool.refusal.message);
  expect(viaTool.inputs[0]).toMatchObject({
    runtime: "codex",
    sandbox: true,
    runner: "local",
    timeoutSec: 45,
    isolation: "worktree",
    gate: { command: "true", timeoutSec: 300, retries: 1 },
    budget: { maxTurns: 3 },
  });
  // pi's subagent tool: the same agent and task, with the finalize contract that tool requires.
  const viaSubagent = await prepared(e, subagentRequest({ agent: "scout", task: "say hi" }, undefined, cwd));
  if (!("inputs" in viaSubagent)) throw new Error(viaSubagent.refusal.message);
  expect(viaSubagent.inputs[0]).toEqual({
    name: "scout",
    prompt: "say hi",
    cwd,
    agent: "scout",
    modelChoice: {},
    sessionId: "session-1",
    timeoutSec: 600,
    context: "fresh",
    finalize: "required",
    keepProcesses: false,
    budget: {},
    runner: "local",
    sandbox: false,
    runtime: "pi",
    notes: [],
  });
});

const BAD: [string, Record<string, unknown>, string, RegExp][] = [
  [
    "two tasks that do the same thing",
    {
      tasks: [
        { name: "a", prompt: "same" },
        { name: "b", prompt: "same" },
      ],
    },
    "INVALID_INPUT",
    /^Duplicate tasks: task 1 \("a"\) and task 2 \("b"\)/,
  ],
  [
    "a session that does not exist",
    { tasks: [{ name: "a", prompt: "go on", resume: "0123456789abcdef" }] },
    "INVALID_INPUT",
    /0123456789abcdef/,
  ],
  [
    "a folder that does not exist",
    { tasks: [{ name: "a", prompt: "x", cwd: "/no/such/folder" }] },
    "INVALID_INPUT",
    /^task "a": working directory \/no\/such\/folder does not exist/,
  ],
  [
    "a gate in a folder that does not exist",
    { tasks: [{ name: "a", prompt: "x", cwd: "/no/such/folder", gate: "true" }] },
    "INVALID_INPUT",
    /^task "a": its gate `true` would run in/,
  ],
  [
    "a sandboxed task whose folder is a link to the home",
    { tasks: [{ name: "a", prompt: "x", cwd: join(root, "home-link"), sandbox: true }] },
    "INVALID_INPUT",
    /^task "a": its folder \/\S+\/home-link \(really \/\S*\) is your home folder; a sandboxed or container task may write its whole folder/,
  ],
  [
    "a sandboxed task whose folder is the home through a link in the middle of its path",
    { tasks: [{ name: "a", prompt: "x", cwd: join(root, "slash", homedir().slice(1)), sandbox: true }] },
    "INVALID_INPUT",
    /^task "a": its folder \S+\/slash\/\S+ \(really \S+\) is your home folder/,
  ],
  [
    "a sandboxed task whose folder is `/` through a link",
    { tasks: [{ name: "a", prompt: "x", cwd: join(root, "slash"), sandbox: true }] },
    "INVALID_INPUT",
    /^task "a": its folder \S+\/slash \(really \/\) is a folder holding your home folder/,
  ],
  [
    "a sandboxed task whose folder holds pi's agent dir",
    { tasks: [{ name: "a", prompt: "x", cwd: root, sandbox: true }] },
    "INVALID_INPUT",
    /^task "a": its folder \S+ is a folder holding pi's agent dir/,
  ],
  [
    "a forked context with no conversation",
    { tasks: [{ name: "a", prompt: "x", context: "fork" }] },
    "INVALID_INPUT",
    /^task "a": context "fork" needs a parent pi session/,
  ],
];

for (const [what, doc, code, message] of BAD) {
  test(`${what}: the same refusal through every front, and nothing admitted`, async () => {
    const e = engine();
    const file = join(root, "bad.json");
    writeFileSync(file, JSON.stringify(doc));
    const results: Prepared[] = [];
    for (const r of [cliDelegate(["--tasks", file]), cliFlow(doc), piTool(doc)]) {
      results.push(await prepared(e, r));
      expect(caps.used().spawns).toBe(0);
    }
    for (const r of results) {
      if (!("refusal" in r)) throw new Error(`not refused: ${JSON.stringify(r.inputs)}`);
      expect(r.refusal.code as string).toBe(code);
      expect(r.refusal.message).toMatch(message);
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });
}

test("an MCP client's roots, by real paths: a task whose folder links out of them is refused; one written through a link to a root is not", async () => {
  const e = engine();
  const out = await prepared(e, {
    ...piTool({ tasks: [{ name: "a", prompt: "x", cwd: join(cwd, "out") }] }),
    roots: [cwd],
  });
  expect(out).toMatchObject({ refusal: { code: "INVALID_INPUT" } });
  expect((out as { refusal: Refusal }).refusal.message).toBe(
    `task "a": cwd ${join(cwd, "out")} (really ${other}) is outside the MCP client's roots (${cwd}); use a folder inside one of them.`,
  );
  expect(caps.used().spawns).toBe(0);
  // A root given through a link, a task inside it: runs, in its real folder.
  const inside = await prepared(e, {
    ...piTool({ tasks: [{ name: "a", prompt: "x", cwd }] }),
    roots: [join(root, "work-link")],
  });
  if (!("inputs" in inside)) throw new Error(inside.refusal.message);
  expect(inside.inputs[0].cwd).toBe(cwd);
  // A task folder written through a link is its real path from the start: what is checked is what runs.
  const linked = await prepared(e, piTool({ tasks: [{ name: "a", prompt: "x", cwd: join(root, "work-link") }] }));
  if (!("inputs" in linked)) throw new Error(linked.refusal.message);
  expect(linked.inputs[0].cwd).toBe(cwd);
});

test.each([
  ["cannot be written (read-only)", { readOnly: true }, "STORE_FAILED", /cannot be written by this user/],
  ["sits on a full disk", { freeBytes: 4096 }, "DISK_FULL", /^disk full: 4 KB free where the session database/],
] as const)(
  "a session database that %s: the same refusal through every front, nothing started",
  async (_what, db, code, message) => {
    const e = engine({}, db);
    const doc = { tasks: [{ name: "a", prompt: "one" }] };
    const results = [];
    for (const r of [cliDelegate(["one", "--name", "a"]), cliFlow(doc), piTool(doc)]) {
      results.push(await prepared(e, r));
      expect(caps.used().spawns).toBe(0);
    }
    for (const r of results) expect(r).toMatchObject({ refusal: { code } });
    expect((results[0] as { refusal: { message: string } }).refusal.message).toMatch(message);
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
    expect(e.store.listSessions({ limit: 10 })).toEqual([]);
  },
);

test("the session caps refuse the same call the same way through every front", async () => {
  const e = engine({ maxSpawnsPerSession: 1 });
  const doc = {
    tasks: [
      { name: "a", prompt: "one" },
      { name: "b", prompt: "two" },
    ],
  };
  const results = await Promise.all(
    [cliDelegate(["one", "two", "--name", "a", "--name", "b"]), cliFlow(doc), piTool(doc)].map((r) => prepared(e, r)),
  );
  for (const r of results) expect(r).toMatchObject({ refusal: { code: "SPAWN_LIMIT" } });
  expect(results[1]).toEqual(results[0]);
  expect(results[2]).toEqual(results[0]);
});

test("pi's tool schema offers every task field the delegate input accepts (a field the parser knows reaches the model)", async () => {
  const { DELEGATE_SCHEMA } = await import("../../../../src/core/call/schemas.ts");
  const { TASK_FIELDS } = await import("../../../../src/core/task-fields.ts");
  const offered = Object.keys(
    (DELEGATE_SCHEMA as { properties: { tasks: { items: { properties: Record<string, unknown> } } } }).properties.tasks
      .items.properties,
  );
  expect(offered.sort()).toEqual([...TASK_FIELDS].sort());
});
