// Storage failures on every path a person meets them (docs/errors.md, core/store/store-error.ts): a database this
// user cannot write, one of a newer subagents, a working folder this user cannot read, and a disk that fills up
// while a run goes on. Each is one line with its exit code, never a stack trace; a run whose end did not fit says
// so on screen and in its record, and leaves no half-written files. The real executable, the embedded pi.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { script } from "../../src/scripted/model-server.ts";
import { cli, piWorld, type PiWorld, summaryOf, taskWhy } from "../support/pi-env.ts";
import { ensureRoot } from "../support/engines.ts";
import { Store } from "../../src/core/store/store.ts";
import { bunDbOpener } from "../../src/host/sqlite-bun.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const NOBODY = 65534;
/** The CLI as an unprivileged user (nobody), who may read the world but owns none of it. */
const asNobody = ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"];
const noStack = (r: { stderr: string }) => {
  expect(r.stderr).not.toContain("internal error");
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stderr.trim().split("\n")).toHaveLength(1);
};
const answer = (text: string) => `${text} ${script([{ text: `done: ${text}` }])}`;

/** The world readable by nobody (its folders are root's and 0700 as made). */
function openToNobody(): void {
  for (const d of [world.root, world.agentDir, world.workDir, join(world.root, "bin")]) chmodSync(d, 0o755);
}

test("a session database this user cannot write (another user's): one line, exit 2, nothing started or said started", async () => {
  const skip = ensureRoot("the read-only store tests");
  if (skip) return console.warn(skip);
  // The database exists and is root's: nobody may read it, not write it.
  const made = await cli(world, ["run", "default", answer("as root")], { binary: true });
  expect(made.code, made.stderr).toBe(0);
  openToNobody();
  for (const args of [
    ["run", "default", answer("as nobody")],
    ["delegate", answer("a"), answer("b")],
    ["delegate", "--background", answer("in the background")],
    ["run", "--background", "default", answer("run in the background")],
  ]) {
    const r = await cli(world, args, { binary: true, prefix: asNobody });
    expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
    expect(r.stderr).toContain(`the session database ${world.env.SUBAGENTS_DB} cannot be written by this user`);
    expect(r.stderr).toContain("set SUBAGENTS_DB");
    expect(r.stdout).not.toContain("started");
    noStack(r);
  }
  // doctor says so too (taking the write lock alone, as it did, passed on a read-only file).
  const doctor = await cli(world, ["doctor", "--json"], { binary: true, prefix: asNobody });
  const check = JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === "database");
  expect(check.status, doctor.stdout).toBe("fail");
  expect(check.detail).toContain(`${world.env.SUBAGENTS_DB} is not writable`);
  // Nothing of it reached the store (root still lists only its own run).
  const list = await cli(world, ["sessions", "--json"], { binary: true });
  expect(list.json.map((s) => s.name)).toEqual(["default"]);
}, 120_000);

test("a working folder this user cannot read: one line, exit 2", async () => {
  const skip = ensureRoot("the unreadable folder tests");
  if (skip) return console.warn(skip);
  openToNobody();
  const locked = join(world.root, "locked");
  mkdirSync(join(locked, "inner"), { recursive: true });
  chmodSync(locked, 0o700);
  const nobodysDb = join(world.root, "nobody-db");
  mkdirSync(nobodysDb, { recursive: true });
  chownSync(nobodysDb, NOBODY, NOBODY);
  const env = { SUBAGENTS_DB: join(nobodysDb, "subagents.db") };
  for (const args of [
    ["run", "default", "--cwd", join(locked, "inner"), "hi"],
    ["delegate", "--cwd", join(locked, "inner"), "hi"],
  ]) {
    const r = await cli(world, args, { binary: true, prefix: asNobody, env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`the working folder ${join(locked, "inner")} cannot be read by this user`);
    noStack(r);
  }
  // A task's own folder in a --tasks file: the same check, through the call module.
  const tasks = join(world.workDir, "tasks.json");
  await Bun.write(tasks, JSON.stringify({ tasks: [{ name: "t", prompt: "p", cwd: join(locked, "inner") }] }));
  chmodSync(tasks, 0o644);
  const r = await cli(world, ["delegate", "--tasks", tasks], { binary: true, prefix: asNobody, env });
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toContain(`task "t": working directory ${join(locked, "inner")} cannot be read by this user`);
  noStack(r);
}, 120_000);

test("a session database written by a newer subagents: every command says so in one line, exit 2, and leaves it as it was", async () => {
  const file = join(world.root, "newer.db");
  const first = await cli(world, ["sessions"], { binary: true, env: { SUBAGENTS_DB: file } });
  expect(first.code, first.stderr).toBe(0);
  const db = new Database(file);
  db.exec("PRAGMA user_version = 99");
  db.close();
  for (const args of [["sessions"], ["run", "default", answer("newer")], ["delegate", "--background", answer("x")]]) {
    const r = await cli(world, args, { binary: true, env: { SUBAGENTS_DB: file } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`the session database ${file} was written by a newer subagents (schema 99;`);
    noStack(r);
  }
  const after = new Database(file, { readonly: true });
  expect((after.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(99);
  after.close();
}, 60_000);

test("a disk that fills up during a run: the run's result is shown, 'disk full' and where said on screen and in its record, exit 2, no temp files left", async () => {
  const skip = ensureRoot("the full-disk tests");
  if (skip) return console.warn(skip);
  const mnt = join(world.root, "small-disk");
  mkdirSync(mnt, { recursive: true });
  const mount = spawnSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", mnt], { encoding: "utf8" });
  if (mount.status !== 0) throw new Error(`cannot mount a tmpfs at ${mnt}: ${mount.stderr}`);
  try {
    const env = { SUBAGENTS_DB: join(mnt, "subagents.db") };
    const fill = `dd if=/dev/zero of=${mnt}/fill bs=1M 2>&1 | tail -1`;
    const r = await cli(
      world,
      [
        "run",
        "default",
        "--json",
        `fill it ${script([
          { tool: "bash", args: { command: fill } },
          { text: "the answer", repeat: 2000 },
        ])}`,
      ],
      { binary: true, env },
    );
    expect(r.code, r.stderr).toBe(2);
    const [task] = summaryOf(r.json);
    // The child's work is not lost: its answer is shown, with why it is not in the store.
    expect(task.status, taskWhy(task, r)).toBe("completed");
    expect(task.output.startsWith("the answer")).toBe(true);
    expect(task.recordError).toEqual({
      code: "DISK_FULL",
      message: `disk full: cannot write the session database ${env.SUBAGENTS_DB}`,
    });
    expect(r.stderr).toContain(
      `(${task.sessionId}): its result could not be recorded: disk full: cannot write the session database ${env.SUBAGENTS_DB}`,
    );
    noStack(r);
    // The record says why (the short record fitted in the room the run kept), already while the disk is full.
    const shown = await cli(world, ["session", task.sessionId, "--json"], { binary: true, env });
    expect(shown.json[0]).toMatchObject({ status: "error" });
    const out = await cli(world, ["output", task.sessionId, "--json"], { binary: true, env });
    expect(out.json[0].error).toContain("disk full: cannot write the session database");
    // No temp files of ours on the full disk: owner records and their temp files, the reserve.
    const control = join(mnt, "control");
    const left = existsSync(control) ? readdirSync(control) : [];
    expect(left.filter((n) => n.endsWith(".tmp") || n.endsWith(".ballast"))).toEqual([]);
    const doctor = await cli(world, ["doctor", "--json"], { binary: true, env });
    const check = JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === "database");
    expect(check.status).toBe("fail");
    expect(check.detail).toMatch(/^disk full: \d+ KB free where .*small-disk\/subagents\.db lives$/);
    // A call started on the full disk starts nothing.
    const refused = await cli(world, ["delegate", answer("on a full disk")], { binary: true, env });
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/disk full: \d+ KB free where the session database .* lives; nothing was started/);
    noStack(refused);
    // With its WAL gone, SQLite says only "disk I/O error" (it cannot make its shared memory file): any command still
    // says the disk is full.
    for (const f of ["-wal", "-shm"]) rmSync(`${env.SUBAGENTS_DB}${f}`, { force: true });
    spawnSync("dd", ["if=/dev/zero", `of=${mnt}/fill-more`, "bs=4k"]);
    for (const args of [["sessions"], ["prune", "--dry-run"], ["run", "default", "x"]]) {
      const r2 = await cli(world, args, { binary: true, env });
      expect([r2.code, r2.stderr.trim()], args.join(" ")).toEqual([
        2,
        `subagents: disk full: cannot write the session database ${env.SUBAGENTS_DB}`,
      ]);
    }
  } finally {
    spawnSync("umount", ["-l", mnt]);
    rmSync(mnt, { recursive: true, force: true });
  }
}, 120_000);

test("a database whose indexes no longer match its rows (a -wal deleted while it held pages): doctor ✗ names it and how to mend it", async () => {
  const file = join(world.root, "damaged.db");
  const store = new Store(bunDbOpener(Database)(file), { isAlive: () => true });
  for (let i = 0; i < 3; i++) {
    const id = store.newSessionId();
    store.createSession({ id, name: `s${i}`, agent: "default", cwd: world.workDir });
    store.startRun(id, { prompt: "p", ownerPid: 1 });
  }
  const db = new Database(file);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  const root = (
    db.query("SELECT rootpage FROM sqlite_master WHERE name = 'runs_session'").get() as { rootpage: number }
  ).rootpage;
  const pageSize = (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
  const id = (db.query("SELECT session_id FROM runs LIMIT 1").get() as { session_id: string }).session_id;
  db.close();
  // The index's copy of one run's session id changes; the row itself stays: the index no longer matches it.
  const fd = openSync(file, "r+");
  const page = Buffer.alloc(pageSize);
  readSync(fd, page, 0, pageSize, (root - 1) * pageSize);
  const at = page.indexOf(id);
  expect(at).toBeGreaterThan(0);
  page.write(id[0] === "0" ? "1" : "0", at);
  writeSync(fd, page, 0, pageSize, (root - 1) * pageSize);
  closeSync(fd);
  const database = async () =>
    (await cli(world, ["doctor", "--json"], { binary: true, env: { SUBAGENTS_DB: file } })).json[0].checks.find(
      (c: { name: string }) => c.name === "database",
    );
  const damaged = await database();
  expect(damaged.status).toBe("fail");
  expect(damaged.detail).toContain(`${file} is damaged: row `);
  expect(damaged.detail).toContain("missing from index runs_session");
  expect(damaged.fix).toContain(`rebuild them (sqlite3 ${file} REINDEX)`);
  // What the fix says mends it.
  const mend = new Database(file);
  mend.exec("REINDEX");
  mend.close();
  expect((await database()).status).toBe("ok");
}, 60_000);
