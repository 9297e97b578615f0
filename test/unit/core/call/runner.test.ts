// The call runner (src/core/call/runner.ts): what every front hands a prepared call to. Its caps admit or refuse the
// call, every task has its store row (queued) before the runner returns, a store that cannot record them fails
// the start and gives the admission back, and what it reports comes as events in order. No front runs a task
// around it (the imports below are checked). Tasks here never start a child: the call is stopped, or refused.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { prepareCall, type PreparedCall } from "../../../../src/core/call/prepare.ts";
import { startCall, type CallEvent } from "../../../../src/core/call/runner.ts";
import { realClock } from "../../../../src/core/host.ts";
import { CapGuard } from "../../../../src/core/run/cap-guard.ts";
import { createEngine, type Engine } from "../../../../src/core/run/engine.ts";
import { defaultSettings } from "../../../../src/core/settings.ts";
import { Store } from "../../../../src/core/store/store.ts";
import { createBunHost } from "../../../../src/host/bun.ts";
import { bunDbOpener } from "../../../../src/host/sqlite-bun.ts";
import { REPO } from "../../../support/pi-env.ts";

const root = mkdtempSync(join(tmpdir(), "call-runner-"));
const cwd = join(root, "work");
mkdirSync(cwd);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function engine(
  settings: Partial<ReturnType<typeof defaultSettings>> = {},
  isAlive?: (o: { pid: number; start: string | null }) => boolean,
): Engine & { store: Store } {
  const host = createBunHost(bunDbOpener(Database));
  const store = new Store(host.openDb(join(root, `db-${Math.random().toString(16).slice(2)}.sqlite`)), {
    isAlive: isAlive ?? ((o) => host.isAlive(o.pid)),
  });
  return createEngine({
    host,
    clock: realClock,
    store,
    settings: { ...defaultSettings(), ...settings },
    profiles: new Map(),
    agentDir: join(root, "agent"),
    piCommand: ["pi"],
    piEnv: {},
    depth: 0,
  });
}

async function prepared(e: Engine, caps: CapGuard, prompts: string[]): Promise<PreparedCall> {
  const tasks = prompts.map((prompt, i) => ({ name: `t${i + 1}`, prompt }));
  const p = await prepareCall(e, { tasks, defaults: { cwd }, concurrency: 1 }, { caps });
  if ("refusal" in p) throw new Error(`refused: ${p.refusal.message}`);
  return p.call;
}

test("every task has its row, queued, once the call started; a stopped call records each one's end; events come in order", async () => {
  const e = engine();
  const caps = new CapGuard(undefined, "this test");
  const call = await prepared(e, caps, ["first", "second", "third"]);
  const events: CallEvent[] = [];
  const stop = new AbortController();
  stop.abort();
  const running = startCall(e, call, { caps, signal: stop.signal, onEvent: (ev) => events.push(ev) });
  if ("refusal" in running) throw new Error(running.refusal.message);
  // Recorded before startCall returned: what a front then says "started" has a row whatever becomes of its owner.
  for (const t of call.tasks)
    expect(e.store.getSession(t.sessionId), t.name).toMatchObject({
      status: "queued",
      runs: [{ status: "queued", ownerPid: process.pid }],
    });
  expect(caps.status()).toMatchObject({ queued: 3 });
  const outcomes = await running.settled;
  expect(outcomes.map((o) => [o.name, o.result.errorCode])).toEqual([
    ["t1", "SUBAGENT_CANCELLED"],
    ["t2", "SUBAGENT_CANCELLED"],
    ["t3", "SUBAGENT_CANCELLED"],
  ]);
  for (const t of call.tasks) {
    const s = e.store.getSession(t.sessionId)!;
    // The queued run is the one that ended: no second run, nothing left queued.
    expect(s.runs.map((r) => [r.status, r.error])).toEqual([["error", "Cancelled before it started"]]);
  }
  // Per task, in order: taken from the queue, its run recorded as started and then its end (what its hooks get),
  // its end reported.
  for (const [i] of call.tasks.entries()) {
    const own = events
      .filter((ev) => ev.index === i)
      .map((ev) => (ev.type === "recorded" ? `recorded ${ev.payload.event}` : ev.type));
    expect(own, `task ${i}`).toEqual(["taskStart", "recorded taskStart", "recorded taskEnd", "taskEnd"]);
  }
  expect(caps.status()).toEqual({ running: 0, queued: 0, cost: 0 });
});

test("the caps refuse the call in the runner, as in every front: nothing recorded, nothing admitted", async () => {
  const e = engine({ maxSpawnsPerSession: 2 });
  // A fresh guard for preparing (a front's check passes), then the runner's own that already counts one child.
  const call = await prepared(e, new CapGuard(undefined, "the front"), ["one", "two"]);
  const caps = new CapGuard(undefined, "this background run");
  expect(caps.admit(e.settings, { tasks: 1 })).toBeNull();
  const running = startCall(e, call, { caps });
  expect(running).toMatchObject({ refusal: { code: "SPAWN_LIMIT" } });
  expect((running as { refusal: { message: string } }).refusal.message).toContain("this background run");
  for (const t of call.tasks) expect(e.store.getSession(t.sessionId)).toBeNull();
  expect(caps.used().spawns).toBe(1);
});

test("a store that cannot record the tasks fails the start: the ones recorded end as not started, the admission is given back", async () => {
  const e = engine();
  const caps = new CapGuard(undefined, "this test");
  const call = await prepared(e, caps, ["one", "two", "three"]);
  let n = 0;
  const queueRun = e.store.queueRun.bind(e.store);
  e.store.queueRun = (s, r) => {
    if (++n === 2) throw new Error("attempt to write a readonly database");
    return queueRun(s, r);
  };
  expect(() => startCall(e, call, { caps })).toThrow("readonly");
  const [first, second] = call.tasks.map((t) => e.store.getSession(t.sessionId));
  expect(first!.runs.map((r) => [r.status, r.error])).toEqual([
    ["error", "not started: the call could not record its tasks (attempt to write a readonly database)"],
  ]);
  expect(second).toBeNull();
  expect(caps.used().spawns).toBe(0);
  expect(caps.status().queued).toBe(0);
});

test("a resume is refused as running exactly when the store's own judgement of the owner would refuse its start", async () => {
  // The owner's PID runs (this process) but the store judges it another process (a reused PID): the check before
  // the call must agree with the store, or a resume is refused that the store would start (or the reverse).
  for (const alive of [false, true]) {
    const e = engine({}, () => alive);
    const id = e.store.newSessionId();
    e.store.createSession({ id, name: "old", agent: "default", cwd });
    e.store.startRun(id, { prompt: "earlier", ownerPid: process.pid, ownerStart: "not this process" });
    const p = await prepareCall(
      e,
      { tasks: [{ name: "again", prompt: "go on", resume: id }], defaults: { cwd }, concurrency: 1 },
      { caps: new CapGuard(undefined, "this test") },
    );
    const refused = "refusal" in p ? p.refusal.message : null;
    expect(refused, `owner judged ${alive ? "alive" : "gone"}`).toBe(
      alive ? `Cannot resume: session "${id}" is still running. Wait for it to complete before resuming.` : null,
    );
    if (!alive) expect(() => e.store.startRun(id, { prompt: "go on", ownerPid: process.pid + 1 })).not.toThrow();
  }
});

/** What runs a task, by the module that has it: only the call runner (core/call/) may reach them. */
const RUNNER_INTERNALS: Record<string, string[]> = {
  "src/core/run/task.ts": ["runTask"],
  "src/core/run/scheduler.ts": ["runScheduled", "runStreamed"],
  "src/core/run/task-hooks.ts": ["settleHooks"],
  "src/core/run/task-prepare.ts": ["prepareTask"],
};

test("no front runs a task around the runner: none imports, in any form, a module that runs a task", async () => {
  // The guard guards what exists: each module still has the functions it is kept here for.
  for (const [file, names] of Object.entries(RUNNER_INTERNALS)) {
    const mod = (await import(join(REPO, file))) as Record<string, unknown>;
    for (const name of names) expect(typeof mod[name], `${file} exports ${name}`).toBe("function");
  }
  const fronts = ["cli", "pi", "mcp", "control", "embedded", "ui"].map((d) => join(REPO, "src", d));
  const files = fronts.flatMap((d) =>
    readdirSync(d, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".ts"))
      .map((f) => join(d, f)),
  );
  // Any way a module is reached: `import {…}`, `import * as`, a default or side-effect import, `export … from`,
  // `import()` and `require()`.
  const reaches = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["']([^"']+)["']/g;
  const internal = Object.keys(RUNNER_INTERNALS).map((f) => f.replace(/^src\//, ""));
  const bypass = files.flatMap((f) =>
    [...readFileSync(f, "utf8").matchAll(reaches)]
      .map(([, spec]) => spec)
      .filter((spec) => internal.some((m) => join(dirname(f), spec) === join(REPO, "src", m)))
      .map((spec) => `${relative(REPO, f)}: ${spec}`),
  );
  expect(bypass).toEqual([]);
  // And every front that runs a call starts it through the runner.
  for (const f of [
    "src/cli/run-call.ts",
    "src/cli/background/supervisor.ts",
    "src/pi/tool-env.ts",
    "src/mcp/call-adapter.ts",
  ])
    expect(readFileSync(join(REPO, f), "utf8"), f).toMatch(
      /import \{[^}]*\b(startCall|runCall)\b[^}]*\} from "[^"]*core\/call\/runner\.ts"/,
    );
});
