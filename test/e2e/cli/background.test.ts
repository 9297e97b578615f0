// Background runs and control (issue 13), end to end with real processes: the CLI from source, its detached
// supervisor, real pi children against the scripted model server. Steer, cancel, wait, SIGKILL of the owner.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piCmd, piWorld, type PiWorld } from "../../support/pi-env.ts";
import { resolvedTask } from "../../support/resolved-task.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

/** Every process started for this test world (CLI, supervisor, pi children and their tools): they carry its agent dir. */
function worldProcesses(): number[] {
  const needle = `PI_CODING_AGENT_DIR=${world.agentDir}\0`;
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, "utf8").includes(needle)) pids.push(Number(name));
    } catch {
      // gone, or not ours
    }
  }
  return pids;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z");
  } catch {
    return false;
  }
};

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

/** Resolves once the model has been asked for this task's first turn (its child is up and working). */
const modelAsked = (marker: string) =>
  until(
    `a model request for ${marker}`,
    () => world.server.requests.some((r) => JSON.stringify(r.messages ?? []).includes(marker)),
    60_000,
  );

const sessionIds = (json: Record<string, any>[]) =>
  json.filter((e) => e.type === "task_background").map((e) => e.sessionId as string);

/** A background task inside a 60 s bash call (no turn boundary soon), once its child is working. */
async function startLongBash(
  label: string,
  more: string[] = [],
): Promise<{ id: string; ids: string[]; supervisor: number }> {
  const marker = `${label}-${Date.now()}`;
  const r = await cli(world, [
    "delegate",
    "--background",
    "--json",
    `Long ${marker} ${script([{ tool: "bash", args: { command: "sleep 60" } }])}`,
    ...more,
  ]);
  const ids = sessionIds(r.json);
  await modelAsked(marker);
  await Bun.sleep(500);
  return { id: ids[0], ids, supervisor: r.json.at(-1)!.supervisorPid as number };
}

test("delegate --background of 3 tasks returns at once; wait collects all three; nothing is left running", async () => {
  const marker = `bg3-${Date.now()}`;
  const tasks = [1, 2, 3].map(
    (i) =>
      `task ${i} ${marker} ${script([{ tool: "bash", args: { command: "sleep 1" } }, { finalize: { status: "SUCCESS", result: `out ${i} ${marker}` } }])}`,
  );
  // The compiled executable (what users run; from source, Bun's cold transpile alone can take a second), which
  // then starts itself as the supervisor.
  const t0 = performance.now();
  const r = await cli(world, ["delegate", "--background", "--json", ...tasks], { binary: true });
  const took = performance.now() - t0;
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(took).toBeLessThan(1500);
  const ids = sessionIds(r.json);
  expect(ids).toHaveLength(3);
  const summary = r.json.at(-1)!;
  expect(summary.type).toBe("summary");
  expect(summary.tasks.map((t: any) => t.sessionId)).toEqual(ids);
  // Right away, before any child has started: wait knows the sessions (the supervisor is registered).
  const w = await cli(world, ["wait", ...ids, "--json"]);
  expect(w.code).toBe(0);
  const done = w.json.at(-1)!;
  expect(done.type).toBe("summary");
  expect(done.tasks.map((t: any) => [t.sessionId, t.status, t.output])).toEqual(
    ids.map((id, i) => [id, "completed", `out ${i + 1} ${marker}`]),
  );
  // Plain wait on finished sessions prints like delegate and does not block.
  const again = await cli(world, ["wait", ids[0]]);
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(new RegExp(`✓ task-1 .*${ids[0]}`));
  expect(again.stdout).toContain("1 completed");
  expect(again.stdout).toContain(`out 1 ${marker}`);
  // The supervisor exits when its last task ends; no child stays behind.
  await until("the supervisor and its children to exit", () => worldProcesses().length === 0, 5000);
  expect(readdirSync(`${world.root}/control`).filter((n) => n.endsWith(".json") || n.endsWith(".sock"))).toEqual([]);
}, 120_000);

// The default child pi, and the last pi under the old name (0.73.1) under the machine's Node: its
// sendUserMessage(…, {deliverAs: "steer"}) is what our child extension relies on there too.
const CHILD_PIS: [string, Record<string, string>][] = [
  ["the default child pi", {}],
  ["old pi 0.73.1 as the child", { SUBAGENTS_PI: piCmd("old", "node").join(" ") }],
];

for (const [label, childEnv] of CHILD_PIS)
  test(`steer reaches a foreground child 1.5 s into a 3 s bash call; the child acts on it; the transcript has it (${label})`, async () => {
    const marker = `steer-${Date.now()}`;
    const task = `Work ${marker} ${script([{ tool: "bash", args: { command: "sleep 3; echo slept" } }, { finalize: { status: "SUCCESS", result: "not steered" } }])}`;
    const run = cli(world, ["run", "default", task, "--json"], { env: childEnv });
    await modelAsked(marker);
    await Bun.sleep(1500);
    const id = sessionOfPrompt(marker);
    const steerText = `Change of plan ${marker}: ${script([{ finalize: { status: "SUCCESS", result: `steered ${marker}` } }])}`;
    const s = await cli(world, ["steer", id, steerText]);
    expect(s.stderr).toContain(`delivered to ${id}`);
    expect(s.code).toBe(0);
    const r = await run;
    expect(r.code).toBe(0);
    expect(r.json.at(-1)!.tasks[0].output).toBe(`steered ${marker}`);
    // The run records which pi it ran.
    if (childEnv.SUBAGENTS_PI) expect(runPi(id)).toContain("@mariozechner/pi-coding-agent");
    // Delivered at the turn boundary: after the bash result, before the next model call.
    const req = world.server.requests.find((q) =>
      JSON.stringify(q.messages ?? []).includes(`Change of plan ${marker}`),
    )!;
    const roles = (req.messages ?? []).map((m) => m.role);
    expect(roles.slice(-2)).toEqual(["tool", "user"]);
    const transcript = await cli(world, ["session", id]);
    expect(transcript.stdout).toContain(`Change of plan ${marker}`);
    expect(transcript.stdout.indexOf("slept")).toBeLessThan(transcript.stdout.indexOf(`Change of plan ${marker}`));
  }, 120_000);

function runPi(id: string): string {
  const { Database } = require("bun:sqlite");
  const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
  const row = db.query("SELECT pi FROM runs WHERE session_id = ? ORDER BY id DESC LIMIT 1").get(id) as { pi: string };
  db.close();
  return row.pi;
}

/** The session whose recorded prompt carries the marker (a foreground run prints its id only on stderr/json). */
function sessionOfPrompt(marker: string): string {
  const { Database } = require("bun:sqlite");
  const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
  const row = db
    .query("SELECT session_id FROM runs WHERE prompt LIKE ? ORDER BY id DESC LIMIT 1")
    .get(`%${marker}%`) as { session_id: string } | null;
  db.close();
  if (!row) throw new Error(`no run with ${marker}`);
  return row.session_id;
}

test("the supervisor's own caps refuse a call: its word on the ready pipe is the command's refusal; nothing recorded, nothing left", async () => {
  // A job the front would have refused too; handed to the supervisor directly, its refusal is what comes back.
  world.setSubagentSettings({ maxSpawnsPerSession: 1 });
  const saved = { ...process.env };
  Object.assign(process.env, world.env);
  try {
    const stamp = Date.now().toString(16);
    const tasks = [1, 2]
      .map((i) => ({
        name: `t${i}`,
        prompt: `refused ${i}`,
        cwd: world.workDir,
        sessionId: `refused${i}${stamp}`,
      }))
      .map(resolvedTask);
    const { startSupervisor } = await import("../../../src/cli/background/supervisor.ts");
    const { pid, word } = await startSupervisor(dirname(world.env.SUBAGENTS_DB), {
      cwd: world.workDir,
      call: { tasks, refused: [undefined, undefined] },
    });
    expect(word).toMatchObject({ refusal: { code: "SPAWN_LIMIT" } });
    expect(JSON.stringify(word)).toContain("this background run");
    await until("the refusing supervisor to exit", () => !alive(pid), 15_000);
    const listed = await cli(world, ["sessions", "--json"]);
    expect(listed.json.filter((r) => String(r.id).startsWith("refused"))).toEqual([]);
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    world.setSubagentSettings({});
  }
}, 60_000);

test("steer: a session that is not running, or unknown, exits 1 with the reason", async () => {
  const r = await cli(world, [
    "run",
    "default",
    `quick ${script([{ finalize: { status: "SUCCESS", result: "q" } }])}`,
    "--json",
  ]);
  const id = r.json.at(-1)!.tasks[0].sessionId;
  const s = await cli(world, ["steer", id, "hello"]);
  expect(s.code).toBe(1);
  expect(s.stderr).toContain(`not delivered: session ${id} is not running (completed)`);
  const u = await cli(world, ["steer", "0123456789abcdef", "hello"]);
  expect(u.code).toBe(1);
  expect(u.stderr).toContain('no session "0123456789abcdef"');
}, 60_000);

test("a steer to a child that ends before its next turn is reported as not delivered", async () => {
  // The child is inside a long tool call and is cancelled while the steer waits for a turn boundary.
  const { id } = await startLongBash("late");
  const steer = cli(world, ["steer", id, "too late"]);
  await Bun.sleep(1500);
  expect((await cli(world, ["cancel", id])).code).toBe(0);
  const s = await steer;
  expect(s.code).toBe(1);
  expect(s.stderr).toContain(`not delivered: session ${id} ended before the message was delivered`);
  const transcript = await cli(world, ["session", id]);
  expect(transcript.stdout).not.toContain("too late");
}, 120_000);

test("cancel stops a background child through its owner (recorded as cancelled); wait --timeout exits 124 first", async () => {
  const { id } = await startLongBash("cancel");
  const t0 = performance.now();
  const w1 = await cli(world, ["wait", id, "--timeout", "1"]);
  expect(w1.code).toBe(124);
  expect(performance.now() - t0).toBeLessThan(15_000); // the task itself runs far longer
  expect(w1.stderr).toContain(`still running: ${id}`);
  const running = await cli(world, ["sessions", "--running"]);
  expect(running.stdout).toMatch(new RegExp(`^${id}  running .* supervisor \\d+`, "m"));
  const follow = cli(world, ["logs", id, "-f"]);
  const c = await cli(world, ["cancel", id]);
  expect(c.code).toBe(0);
  // logs -f follows the run until it ends, with the tool call and the recorded end.
  const logs = await follow;
  expect(logs.code).toBe(0);
  expect(logs.stdout).toContain("→ bash → sleep 60");
  expect(logs.stdout).toContain(`✗ task-1: error — Cancelled (session: ${id})`);
  expect(c.stdout).toContain(`cancelled ${id}`);
  const w2 = await cli(world, ["wait", id, "--json"]);
  expect(w2.code).toBe(1);
  expect(w2.json.at(-1)!.tasks[0]).toMatchObject({ status: "error", errorCode: "SUBAGENT_CANCELLED" });
  await until("everything to exit", () => worldProcesses().length === 0, 8000);
  expect((await cli(world, ["sessions", "--running"])).stdout.trim()).toBe("Nothing is running.");
  const again = await cli(world, ["cancel", id]);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain("is not running");
}, 120_000);

test("SIGTERM to the supervisor stops its children and records the run as interrupted, not cancelled", async () => {
  const { id, supervisor } = await startLongBash("term", []);
  process.kill(supervisor, "SIGTERM");
  await until("the supervisor and its children to exit", () => worldProcesses().length === 0, 15_000);
  const w = await cli(world, ["wait", id, "--json"]);
  expect(w.code).toBe(1);
  const [task] = w.json.at(-1)!.tasks;
  expect(task.error).toContain("interrupted");
  expect(task.errorCode).not.toBe("SUBAGENT_CANCELLED");
}, 120_000);

test("SIGKILL of the supervisor with tasks queued: its children are gone within seconds; every task it was given keeps its record — the running one interrupted, the queued ones never started — without its owner record", async () => {
  // Three tasks, one at a time: two are still queued when the supervisor dies.
  const { id, ids, supervisor } = await startLongBash("kill", ["queued one", "queued two", "--concurrency", "1"]);
  expect(ids).toHaveLength(3);
  // Recorded when the supervisor accepted them, before the command said "started".
  const before = await cli(world, ["sessions", "--json"]);
  const statusOf = (json: Record<string, any>[], sid: string) => json.find((r) => r.id === sid)?.status;
  expect(ids.map((sid) => statusOf(before.json, sid))).toEqual(["running", "queued", "queued"]);
  expect(worldProcesses().length).toBeGreaterThanOrEqual(3); // supervisor, pi, bash (sleep)
  process.kill(supervisor, "SIGKILL");
  const t0 = performance.now();
  await until("the children to notice and exit", () => worldProcesses().length === 0, 5000);
  console.log(`children gone ${Math.round(performance.now() - t0)} ms after SIGKILL of the supervisor`);
  // As after a reboot: the owner's record is gone too, so only the store can say what became of the tasks.
  rmSync(join(dirname(world.env.SUBAGENTS_DB), "control", `${supervisor}.json`), { force: true });
  const w = await cli(world, ["wait", ...ids, "--json"]);
  expect(w.code, w.stderr).toBe(1);
  const [first, ...queued] = w.json.at(-1)!.tasks;
  expect(first.sessionId).toBe(id);
  expect(first.error).toContain("interrupted");
  for (const q of queued) expect(q).toMatchObject({ status: "error", error: "never started: its owner ended first" });
  const after = await cli(world, ["sessions", "--json"]);
  expect(ids.map((sid) => statusOf(after.json, sid))).toEqual(["error", "error", "error"]);
  const output = await cli(world, ["output", ids[1]]);
  expect(output.code).toBe(1);
  expect(output.stderr).toContain("never started: its owner ended first");
  const session = await cli(world, ["session", ids[2], "--json"]);
  expect(session.code).toBe(1);
  expect(JSON.stringify(session.json)).toContain("never started: its owner ended first");
}, 120_000);
