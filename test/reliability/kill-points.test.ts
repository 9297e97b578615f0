// Kills at many points, on the real engine: the built executable runs an isolated task (a 1,200-file repository's
// worktree, a setup command, a real pi child that writes one file, a gate) and is SIGKILLed at a seeded random
// offset into each of its stages in turn — the worktree being made, the setup, the child, the gate (each stage's
// start is watched for: a loaded machine stretches them unevenly); `subagents apply` of a 700-file merge is killed
// with its git at seeded offsets. After each kill the invariants hold: no process of the run left after 2 s, no
// branch that deletes what the task never touched (a half-made or half-set-up worktree is removed with nothing kept;
// a whole one's work is kept), the records consistent (nothing left running; a branch made is the one the run's
// record names), `prune` finishing exactly what its dry run listed and leaving nothing, an apply undone or finished
// as it says. CI kills once per stage and four applies; SUBAGENTS_KILL_POINTS=N kills N times each
// (SUBAGENTS_KILL_SEED another seed).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../src/scripted/model-server.ts";
import { Store } from "../../src/core/store/store.ts";
import { bunDbOpener } from "../../src/host/sqlite-bun.ts";
import { applyCheck } from "../../src/cli/doctor/apply.ts";
import {
  cli,
  jsonLines,
  markedPids,
  piWorld,
  REPO,
  type PiWorld,
  summaryOf,
  taskWhy,
  until,
} from "../support/pi-env.ts";

const POINTS = Number(process.env.SUBAGENTS_KILL_POINTS) || 4;
const SEED = Number(process.env.SUBAGENTS_KILL_SEED) || 55;
const FILES = 1200;
/** What the issue asks of every process of a killed run: gone this long after its owner's death. */
const GONE_MS = 2000;

let world: PiWorld;
let repo: string;
let head: string;
beforeAll(async () => {
  world = await piWorld();
  repo = join(world.root, "big");
  for (let d = 0; d < 30; d++) {
    mkdirSync(join(repo, `d${d}`), { recursive: true });
    for (let f = 0; f < FILES / 30; f++) writeFileSync(join(repo, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
  }
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", `${FILES} files`);
  head = git("rev-parse", "HEAD").trim();
  // A setup that takes a moment and writes what the task's base then holds; a gate that takes a moment.
  world.setSubagentSettings({ setup: "sleep 0.3; echo generated > gen.txt", setupTimeout: 60 });
});
afterAll(async () => {
  await world.close();
});

const git = (...args: string[]) =>
  execFileSync("git", args, { cwd: repo, encoding: "utf8", env: { ...process.env, HOME: world.root } });

/** mulberry32: the offsets are the same on every run of a seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` offsets over [0, span): one in each nth of it, so early and late points are hit whatever the seed. */
const offsets = (n: number, span: number, rnd: () => number) =>
  Array.from({ length: n }, (_, i) => Math.round(((i + rnd()) / n) * span));

const TASK = `write child.txt ${script([
  { tool: "write", args: { path: "child.txt", content: "the child's work\n" } },
  { finalize: { status: "SUCCESS", result: "wrote it" } },
])}`;
/** A gate of its own per run (a few ms past 0.4 s), so its process is told from any other `sleep`. */
const run = (gate: string) => ["run", "default", TASK, "--isolation", "worktree", "--gate", gate, "--json"];

/** The stages of an isolated run, each with how long after its start a kill may come (well within it). */
const STAGES = [
  { name: "worktree being made", phase: "making", within: 300 },
  { name: "setup", phase: "setup", within: 250 },
  { name: "child", phase: "ready", within: 300 },
  { name: "gate", phase: "gate", within: 300 },
] as const;

/** How far the run's worktree got, as its record says (host/git-worktree.ts), or "gate" once its gate runs. */
function stageOf(gate: string): string | null {
  if (spawnSync("pgrep", ["-f", `^${gate}$`]).status === 0) return "gate";
  const dir = join(world.root, "worktrees");
  const records = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".json")) : [];
  try {
    return records.length ? (JSON.parse(readFileSync(join(dir, records[0]), "utf8")).phase as string) : null;
  } catch {
    return null; // being rewritten
  }
}

function start(args: string[], detached = false) {
  return Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), ...args],
    cwd: repo,
    env: world.env,
    stdout: "pipe",
    stderr: "pipe",
    detached,
  });
}

async function waitGone(since: number): Promise<number[]> {
  for (;;) {
    const left = markedPids(world.root);
    if (!left.length || Date.now() - since > GONE_MS) return left;
    await Bun.sleep(50);
  }
}

const describe = (pids: number[]) =>
  pids.map((pid) => {
    try {
      return `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").slice(0, 160)}`;
    } catch {
      return `${pid}: gone`;
    }
  });

let opened: Store | undefined;
/** The records as the CLI keeps them (read here, and written once for the apply's session). */
const store = (): Store =>
  (opened ??= new Store(bunDbOpener(Database)(join(world.root, "subagents.db")), { isAlive: () => false }));

const branches = () => git("branch", "--list", "subagents/*", "--format=%(refname:short)").split("\n").filter(Boolean);

/** The invariants after any kill (or none): see the file's head. What prune did with each worktree. */
async function checkInvariants(what: string): Promise<string[]> {
  // Records: the next command that opens the store ends what the dead owner left running or queued.
  const listed = await cli(world, ["sessions", "--json"], { binary: true });
  expect(listed.code, listed.stderr).toBe(0);
  expect(
    listed.json.filter((s) => s.status === "running" || s.status === "queued"),
    what,
  ).toEqual([]);
  // prune finishes exactly what its dry run listed, then nothing is left to list.
  const planned = await cli(world, ["prune", "--dry-run", "--json"], { binary: true });
  const pruned = await cli(world, ["prune", "--json"], { binary: true });
  expect(pruned.code, pruned.stderr).toBe(0);
  const shape = (ws: Record<string, any>[]) => ws.map((w) => `${w.id} ${w.action}`).sort();
  expect(shape(pruned.json[0].worktrees), what).toEqual(shape(planned.json[0].worktrees));
  const after = await cli(world, ["prune", "--dry-run", "--json"], { binary: true });
  expect([after.json[0].worktrees, after.json[0].worktreeLeftovers], what).toEqual([[], []]);
  // (What the overlay probe found is kept beside the records: `.overlay-way.json`.)
  const ours = existsSync(join(world.root, "worktrees")) ? readdirSync(join(world.root, "worktrees")) : [];
  expect(
    ours.filter((n) => !n.startsWith(".")),
    what,
  ).toEqual([]);
  expect(git("worktree", "list", "--porcelain").match(/^worktree /gm)?.length, what).toBe(1);
  // Every branch holds the child's one file and nothing else: none deletes what the task never touched.
  const s = store();
  for (const b of branches()) {
    const changed = git("diff", "--name-status", "--no-renames", `${b}~1`, b).trim();
    expect(`${b}: ${changed}`, what).toBe(`${b}: A\tchild.txt`);
    // The run's record names its branch (made by the run itself or by the clean-up after its owner died).
    const id = listed.json.map((x) => x.id as string).find((i) => b.includes(i.slice(0, 8)));
    expect(id, `${what}: ${b} belongs to no recorded session`).toBeDefined();
    const runs = s.getSession(id!)?.runs ?? [];
    expect(
      runs.map((r) => r.isolation?.branch),
      what,
    ).toContain(b);
  }
  // A recorded worktree is never left unfinished once its owner is gone.
  for (const x of listed.json) {
    const isos = (s.getSession(x.id)?.runs ?? []).map((r) => r.isolation).filter(Boolean);
    expect(
      isos.filter((i) => i?.worktree),
      `${what}: ${x.id}`,
    ).toEqual([]);
  }
  for (const b of branches()) git("branch", "-D", "-q", b);
  return pruned.json[0].worktrees.map((w: Record<string, string>) => w.action);
}

test("an isolated run with a setup and a gate, SIGKILLed at seeded points: nothing half-done, nothing left", async () => {
  // The whole run once: its length spreads the kills, and its result is the reference.
  const whole = start(run("sleep 0.4"));
  const out = await new Response(whole.stdout).text();
  const code = await whole.exited;
  const [t] = summaryOf(jsonLines(out));
  expect(code, taskWhy(t, { stderr: await new Response(whole.stderr).text() })).toBe(0);
  expect(t.gate).toEqual({ passed: true, attempts: 1 });
  await checkInvariants("the whole run");
  const rnd = random(SEED);
  for (let i = 0; i < Math.max(POINTS, STAGES.length); i++) {
    const stage = STAGES[i % STAGES.length];
    const gate = `sleep 0.4${1000 + Math.floor(rnd() * 9000)}`;
    const owner = start(run(gate));
    await until(`the run's ${stage.name}`, () => stageOf(gate) === stage.phase, 60_000, 10);
    const at = Math.round(rnd() * stage.within);
    await Bun.sleep(at);
    const what = `a kill ${at} ms into the ${stage.name}`;
    owner.kill("SIGKILL");
    await owner.exited;
    const left = await waitGone(Date.now());
    expect(describe(left), `processes left ${GONE_MS / 1000} s after ${what}`).toEqual([]);
    let expected = [stage.phase === "making" || stage.phase === "setup" ? "discard" : "keep"];
    if (stage.phase === "gate") {
      // Applied before any prune: `apply` finishes the dead owner's worktree itself, then brings in its branch.
      const id = (await cli(world, ["sessions", "--json"], { binary: true })).json[0].id as string;
      const applied = await cli(world, ["apply", id], { binary: true, cwd: repo });
      expect(applied.code, `${what}: ${applied.stderr}`).toBe(0);
      expect(readFileSync(join(repo, "child.txt"), "utf8")).toBe("the child's work\n");
      git("reset", "-q", "--hard", head);
      expected = [];
    }
    // What the clean-up did is what the stage calls for: nothing of a half-made or half-set-up worktree is kept.
    expect(await checkInvariants(what), what).toEqual(expected);
  }
}, 240_000);

test("`subagents apply` SIGKILLed with its git at seeded points: the next apply finishes it, --abort undoes it", async () => {
  // A branch that rewrites a third of the files and adds 300: writing them takes git a moment.
  git("checkout", "-q", "-b", "subagents/big-apply-feedface");
  for (let d = 0; d < 30; d += 3) {
    for (let f = 0; f < FILES / 30; f++) writeFileSync(join(repo, `d${d}`, `f${f}.txt`), `changed ${d}/${f}\n`);
    for (let f = 0; f < 30; f++) writeFileSync(join(repo, `d${d}`, `new${f}.txt`), `new ${d}/${f}\n`);
  }
  git("add", "-A");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "the task's work");
  const branchHead = git("rev-parse", "HEAD").trim();
  git("checkout", "-q", "main");
  git("reset", "-q", "--hard", head);
  git("clean", "-fdq");
  const s = store();
  const id = "feedfacefeedface";
  s.createSession({ id, name: "big apply", agent: "default", cwd: repo });
  const run = s.startRun(id, { prompt: "p", ownerPid: 1 });
  s.setRunIsolation(run, {
    base: head,
    repo,
    branch: "subagents/big-apply-feedface",
    files: [],
    diffstat: "700 files changed",
  });
  const clean = () => git("status", "--porcelain", "--untracked-files=all").trim();
  const t0 = Date.now();
  const whole = start(["apply", id]);
  expect(await whole.exited, await new Response(whole.stderr).text()).toBe(0);
  const span = Date.now() - t0;
  expect(git("rev-parse", "HEAD").trim()).toBe(branchHead);
  const rnd = random(SEED + 1);
  let i = 0;
  for (const at of offsets(POINTS, span, rnd)) {
    git("reset", "-q", "--hard", head);
    git("clean", "-fdq");
    const what = `apply killed at ${at} ms of ${span}`;
    // Its own process group, as a terminal's: the kill takes git with it, midway through writing the tree.
    const apply = start(["apply", id], true);
    await Bun.sleep(at);
    try {
      process.kill(-apply.pid, "SIGKILL");
    } catch {
      // it had ended already: the invariants hold for a whole apply too
    }
    await apply.exited;
    // git may take a moment to die (a kill waits out a write in progress): until then an apply says to wait.
    await until("the killed apply's git gone", () => markedPids(world.root).length === 0, 30_000);
    const check = await applyCheck(repo);
    if (i++ % 2 === 0) {
      const undo = await cli(world, ["apply", "--abort"], { binary: true, cwd: repo });
      expect(undo.code, `${what}: ${undo.stderr}`).toBe(0);
      // Unless it had finished (then --abort leaves it), the tree is exactly as before the apply.
      const now = git("rev-parse", "HEAD").trim();
      if (now === head) expect(clean(), `${what} (doctor said: ${check.detail})`).toBe("");
      else expect([now, clean()], what).toEqual([branchHead, ""]);
    } else {
      const again = await cli(world, ["apply", id], { binary: true, cwd: repo });
      expect(again.code, `${what}: ${again.stderr} (doctor said: ${check.detail})`).toBe(0);
      expect([git("rev-parse", "HEAD").trim(), clean()], what).toEqual([branchHead, ""]);
    }
    expect((await applyCheck(repo)).status, what).toBe("ok");
  }
}, 240_000);
