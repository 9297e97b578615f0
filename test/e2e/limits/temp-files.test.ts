// Nothing of ours is left in /tmp (host/temp-dirs.ts): a child's pi writes its temp files (a long bash output's
// full log, pi-bash-*.log) to a TMPDIR of its run, removed with the run (a kept child: one of its process, removed
// when it ends); the owner's own temp folder goes when it exits, and one an owner killed with SIGKILL left is removed
// by the next owner and by `subagents prune`. The real executable and its embedded pi against the scripted model.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, REPO, type PiWorld, summaryOf, taskWhy, until } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const bash = (command: string) => ({ tool: "bash", args: { command } });
/** The line `tmp:<dir>` a child's bash printed, from the session's transcript. */
async function tmpOf(sessionId: string): Promise<string> {
  const s = await cli(world, ["session", sessionId], { binary: true });
  const m = /tmp:(\/\S+)/.exec(s.stdout);
  if (!m) throw new Error(`no tmp: line in the transcript:\n${s.stdout.slice(-2000)}`);
  return m[1];
}
/** Our temp folders of one process (`subagents-<pid>.<start>-XXXXXX`). */
const foldersOf = (pid: number, dir = tmpdir()) => readdirSync(dir).filter((n) => n.startsWith(`subagents-${pid}.`));

test("a run's TMPDIR holds pi's bash log while it runs and is gone with the run; the owner's folder is gone when it exits", async () => {
  const steps = [bash("echo tmp:$TMPDIR"), bash("seq 1 300000"), bash("ls $TMPDIR"), { text: "done" }];
  const r = await cli(world, ["run", "default", "--json", `temp files ${script(steps)}`], { binary: true });
  const [task] = summaryOf(r.json);
  expect(task.status, taskWhy(task, r)).toBe("completed");
  const dir = await tmpOf(task.sessionId);
  expect(dir).toContain(`/tmp-${task.sessionId}-`);
  // pi wrote the long output's full log there (what `ls $TMPDIR` listed during the run).
  const transcript = (await cli(world, ["session", task.sessionId], { binary: true })).stdout;
  expect(transcript).toMatch(/pi-bash-[0-9a-f]+\.log/);
  expect(existsSync(dir)).toBe(false);
  // The owner's own folder (which held it) went when the CLI exited.
  const owner = dir.slice(0, dir.lastIndexOf("/"));
  expect(existsSync(owner)).toBe(false);
}, 120_000);

test("tasks in a kept child share its process's TMPDIR, removed when the process ends with the call", async () => {
  const task = (n: number) =>
    `kept ${n} ${script([bash(`echo tmp:$TMPDIR; echo x > $TMPDIR/left-${n}`), { text: `k${n}` }])}`;
  const r = await cli(world, ["delegate", "--json", "--concurrency", "1", task(1), task(2)], { binary: true });
  const ends = summaryOf(r.json);
  expect(
    ends.map((t) => t.status),
    taskWhy(ends[0], r),
  ).toEqual(["completed", "completed"]);
  const [a, b] = [await tmpOf(ends[0].sessionId), await tmpOf(ends[1].sessionId)];
  expect(a).toBe(b);
  expect(a).toMatch(/\/kept-\d+-tmp$/);
  expect(existsSync(a)).toBe(false);
}, 120_000);

test("an owner killed with SIGKILL leaves its temp folder: the next owner removes it, and so does `prune`", async () => {
  // A temp folder of its own: every owner sweeps what dead owners left in its TMPDIR, and the suite's other files
  // run owners in the shared /tmp at the same time (one of them would sweep this test's folder before its prune).
  // Short, as a socket path in it must be.
  const tmp = mkdtempSync("/tmp/satf-");
  const env = { TMPDIR: tmp };
  const leave = async () => {
    const proc = Bun.spawn({
      cmd: [join(REPO, "dist", "subagents"), "run", "default", `hold ${script([bash("sleep 30")])}`],
      cwd: world.workDir,
      env: { ...world.env, ...env },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    // Its folder exists once its child started (the prompt file is written there).
    const [folder] = await until(`the owner ${proc.pid}'s temp folder`, () => {
      const f = foldersOf(proc.pid, tmp);
      return f.length ? f : null;
    });
    proc.kill("SIGKILL");
    await proc.exited;
    const dir = join(tmp, folder);
    expect(existsSync(dir)).toBe(true);
    return dir;
  };
  try {
    const first = await leave();
    const dry = await cli(world, ["prune", "--dry-run", "--json"], { binary: true, env });
    expect(dry.json[0].tempDirs).toContain(first);
    expect(existsSync(first)).toBe(true);
    const pruned = await cli(world, ["prune", "--json"], { binary: true, env });
    expect(pruned.json[0].tempDirs).toContain(first);
    expect(existsSync(first)).toBe(false);
    // The next owner that makes its own folder removes what a killed one left.
    const second = await leave();
    const r = await cli(world, ["run", "default", `next ${script([{ text: "ok" }])}`], { binary: true, env });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(second)).toBe(false);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}, 120_000);
