// Liveness never trusts a bare PID (control/registry.ts ownerAlive): a run records its owner's PID and start time
// (/proc/<pid>/stat field 22), and an owner is alive only as that same process — with or without its control record.
// Here a run is left "running" by an owner whose PID another process now holds (a reboot, a long uptime): every
// command sees it as interrupted; the same PID with the owner's own start time is still its owner.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { Database } from "bun:sqlite";
import { script } from "../../src/scripted/model-server.ts";
import { Store } from "../../src/core/store/store.ts";
import { INTERRUPTED_MESSAGE } from "../../src/core/store/store-types.ts";
import { bunDbOpener } from "../../src/host/sqlite-bun.ts";
import { procStartTime } from "../../src/host/process-identity.ts";
import { cli, piWorld, type PiWorld, summaryOf, taskWhy, until } from "../support/pi-env.ts";

let world: PiWorld;
const started: ChildProcess[] = [];
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  for (const p of started) p.kill("SIGKILL");
  await world.close();
});

/** Another process that now holds a PID: any long-lived process of ours. */
async function aProcess(): Promise<number> {
  const p = spawn("sleep", ["600"], { stdio: "ignore" });
  started.push(p);
  await until("the stand-in process to run", () => p.pid && procStartTime(p.pid));
  return p.pid!;
}

/** A session whose last run is recorded as running, owned by pid with this start time (as a dead owner left it). */
function leftRunning(pid: number, start: string | null): string {
  const store = new Store(bunDbOpener(Database)(world.env.SUBAGENTS_DB), { isAlive: () => true });
  const id = store.newSessionId();
  store.createSession({ id, name: `owned-by-${pid}`, agent: "default", cwd: world.workDir });
  store.startRun(id, { prompt: "long work", ownerPid: pid, ownerStart: start });
  return id;
}

test("a run records its owner's start time beside its PID", async () => {
  const r = await cli(world, ["run", "default", "--json", `hello ${script([{ text: "hi" }])}`], { binary: true });
  const [task] = summaryOf(r.json);
  expect(task.status, taskWhy(task, r)).toBe("completed");
  const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
  const row = db.query("SELECT owner_pid, owner_start FROM runs WHERE session_id = ?").get(task.sessionId) as {
    owner_pid: number;
    owner_start: string | null;
  };
  db.close();
  expect(row.owner_pid).toBeGreaterThan(0);
  expect(row.owner_start).toMatch(/^\d+$/);
}, 60_000);

test("an owner's PID now held by another process, no control record: the run is interrupted for every command, and cancel does not hang on it", async () => {
  const pid = await aProcess();
  const id = leftRunning(pid, "1");
  const running = await cli(world, ["sessions", "--running"], { binary: true });
  expect(running.stdout).not.toContain(id);
  const w = await cli(world, ["wait", id, "--timeout", "30", "--json"], { binary: true });
  expect(w.code, w.stderr).toBe(1);
  expect(w.json.at(-1)!.tasks[0]).toMatchObject({ status: "error", error: INTERRUPTED_MESSAGE });
  const c = await cli(world, ["cancel", id], { binary: true });
  expect(c.stderr).toContain("is not running");
  const list = await cli(world, ["sessions", "--json"], { binary: true });
  expect(list.json.find((s) => s.id === id)).toMatchObject({ status: "error" });
  // The process that holds the PID was never touched.
  expect(procStartTime(pid)).not.toBeNull();
}, 60_000);

test("the same PID with the owner's own start time is still its owner: the run stays running until that process ends", async () => {
  const pid = await aProcess();
  const id = leftRunning(pid, procStartTime(pid));
  const running = await cli(world, ["sessions", "--running"], { binary: true });
  expect(running.stdout).toContain(id);
  const w = await cli(world, ["wait", id, "--timeout", "1"], { binary: true });
  expect(w.code, w.stderr).toBe(124);
  started.find((p) => p.pid === pid)!.kill("SIGKILL");
  await until("the owner to be gone", () => procStartTime(pid) === null);
  const after = await cli(world, ["wait", id, "--timeout", "30", "--json"], { binary: true });
  expect(after.json.at(-1)!.tasks[0]).toMatchObject({ status: "error", error: INTERRUPTED_MESSAGE });
}, 60_000);
