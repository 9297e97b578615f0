// Security: what a user's runs record can be read by that user only. Run as an ordinary user would run it — a home
// that is 0755 and umask 022 (Debian's defaults) — then tried from a second local user (made here with useradd,
// used through runuser): the store and its -wal/-shm files, session files, logs, owner records and their folders
// are out of reach, and `subagents sessions` pointed at the victim's agent dir lists nothing. An install made by
// an older version (0644 files in 0755 folders) is fixed the first time it is used.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { script } from "../../src/scripted/model-server.ts";
import { piWorld, REPO, summaryOf, taskWhy, until, type PiWorld } from "../support/pi-env.ts";

let world: PiWorld;
let other: string | null = null;
let skip: string | null = null;
const EXE = join(REPO, "dist", "subagents");

/** A second local user for this file; null (and a loud skip) where users cannot be made (not root). */
function makeUser(): string | null {
  if (process.getuid?.() !== 0) return null;
  const name = `sa${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
  // /etc/passwd may be locked a moment by another test making its own user: try again.
  for (let i = 0; i < 50; i++) {
    const r = spawnSync("useradd", ["--no-create-home", "--shell", "/usr/sbin/nologin", name], { encoding: "utf8" });
    if (r.status === 0) return name;
    if (!/lock/i.test(r.stderr)) throw new Error(`useradd failed: ${r.stderr}`);
    Bun.sleepSync(100);
  }
  throw new Error("useradd: /etc/passwd stayed locked");
}

beforeAll(async () => {
  world = await piWorld();
  other = makeUser();
  if (!other) {
    skip = "*** SKIPPING the second-user checks: not root (CI runs them as root) ***";
    console.warn(`\n${skip}\n`);
  }
  // The victim: a home like Debian's (0755), the agent dir the user made (0755), the database in its default place.
  chmodSync(world.root, 0o755);
  chmodSync(world.agentDir, 0o755);
}, 60_000);
afterAll(async () => {
  if (other)
    for (let i = 0; i < 50 && spawnSync("userdel", [other]).status !== 0; i++) {
      Bun.sleepSync(100);
    }
  await world?.close();
});

const env = () => ({ ...world.env, SUBAGENTS_DB: "" });

/** The CLI with umask 022, as a login shell on Debian has it. */
function runCli(args: string[]) {
  return Bun.spawn({
    cmd: ["sh", "-c", 'umask 022; exec "$0" "$@"', EXE, ...args],
    cwd: world.workDir,
    env: env(),
    stdout: "pipe",
    stderr: "pipe",
  });
}

async function cliDone(args: string[]) {
  const p = runCli(args);
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  const code = await p.exited;
  const json = stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
  return { code, stdout, stderr, json };
}

/** What the second user gets trying to read `path` (a file: cat; a folder: ls). */
function asOther(path: string): { code: number | null; out: string } {
  const isDir = lstatSync(path).isDirectory();
  const r = spawnSync("runuser", ["-u", other!, "--", isDir ? "ls" : "cat", path], { encoding: "utf8" });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** Every file and folder under `dir` (not following symlinks). */
function walk(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    out.push(p);
    if (lstatSync(p).isDirectory()) out.push(...walk(p));
  }
  return out;
}

const mode = (p: string) => lstatSync(p).mode & 0o777;

test("a second local user cannot read the store (-wal, -shm), session files, logs or owner records, nor list the sessions", async () => {
  const marker = `own${Date.now()}`;
  // A background run that holds the store open (its -wal and -shm exist) while the second user tries.
  const hold = `sleep 4.${String(Date.now()).slice(-3)}`;
  const task = `${marker} ${script([{ tool: "bash", args: { command: `${hold}; echo held` } }, { finalize: { status: "SUCCESS", result: `secret result ${marker}` } }])}`;
  const bg = await cliDone(["delegate", "--background", "--json", task]);
  expect(bg.code, bg.stderr).toBe(0);
  const id = bg.json.find((e) => e.type === "task_background")!.sessionId as string;
  const db = join(world.agentDir, "subagents.db");
  await until(
    "the background run's bash call (its store open, with -wal and -shm)",
    () =>
      spawnSync("pgrep", ["-f", `^${hold}`]).status === 0 &&
      readdirSync(world.agentDir).includes("subagents.db-wal") &&
      readdirSync(join(world.agentDir, "control")).some((n) => n.endsWith(".sock")),
    60_000,
  );
  const records = [
    db,
    `${db}-wal`,
    `${db}-shm`,
    ...walk(join(world.agentDir, "control")),
    ...walk(join(world.agentDir, "logs")),
    ...walk(join(world.agentDir, "subagent-sessions")),
  ];
  // Every record is 0600 (a socket too), every folder 0700, whatever the umask was — the running child's session
  // file too (made empty and 0600 before pi writes its first byte into it).
  expect(records.filter((p) => p.endsWith(".jsonl"))).not.toEqual([]);
  for (const p of [...records, join(world.agentDir, "control"), join(world.agentDir, "logs")])
    expect(mode(p).toString(8), p).toBe(lstatSync(p).isDirectory() ? "700" : "600");
  if (!skip) {
    for (const p of records) {
      const r = asOther(p);
      expect(r.code, `${other} read ${p}: ${r.out.slice(0, 200)}`).not.toBe(0);
      expect(r.out).toContain("Permission denied");
      expect(r.out).not.toContain(marker);
    }
    // The sessions, asked for with the victim's agent dir.
    const list = spawnSync(
      "runuser",
      ["-u", other!, "--", "env", `PI_CODING_AGENT_DIR=${world.agentDir}`, "HOME=/tmp", EXE, "sessions", "--json"],
      { encoding: "utf8" },
    );
    expect(`${list.stdout}${list.stderr}`).not.toContain(id);
  }
  const w = await cliDone(["wait", id, "--json"]);
  expect(w.code, w.stderr).toBe(0);
  // After the run too: the store, the session file, the session's log.
  for (const p of [db, ...walk(join(world.agentDir, "subagent-sessions")), ...walk(join(world.agentDir, "logs"))])
    expect(mode(p).toString(8), p).toBe(lstatSync(p).isDirectory() ? "700" : "600");
  // A foreground run of the owner works as ever.
  const fg = await cliDone(["run", "default", `${marker}b ${script([{ text: "fine" }])}`, "--json"]);
  expect(summaryOf(fg.json)[0].status, taskWhy(summaryOf(fg.json)[0], fg)).toBe("completed");
}, 120_000);

test("an install made by an older version (0644 files in 0755 folders) is made owner-only on first use", async () => {
  const agent = join(world.root, "old-agent");
  mkdirSync(agent, { mode: 0o755 });
  writeFileSync(join(agent, "settings.json"), JSON.stringify({ defaultProvider: "fake" }));
  const old = (p: string, text = "x") => {
    mkdirSync(join(p, ".."), { recursive: true });
    writeFileSync(p, text, { mode: 0o644 });
    chmodSync(p, 0o644);
  };
  const db = join(agent, "subagents.db");
  const d = new Database(db, { create: true });
  d.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x)");
  d.close();
  chmodSync(db, 0o644);
  const files = [
    join(agent, "logs", "supervisor-1.log"),
    join(agent, "logs", "abc.log"),
    join(agent, "control", "job-1.json"),
    join(agent, "subagent-sessions", "--old--", "default_abc.jsonl"),
    join(agent, "schedules", "x.json"),
    join(agent, "subagents-runtime", "child-extension-1.js"),
  ];
  for (const f of files) old(f);
  for (const dir of ["logs", "control", "subagent-sessions", "subagent-sessions/--old--", "schedules"])
    chmodSync(join(agent, dir), 0o755);
  const r = spawnSync(EXE, ["sessions", "--json"], {
    env: { ...env(), PI_CODING_AGENT_DIR: agent },
    encoding: "utf8",
  });
  expect(r.status, r.stderr).toBe(0);
  for (const p of [db, ...files]) expect(mode(p).toString(8), p).toBe("600");
  for (const dir of ["logs", "control", "subagent-sessions", "subagent-sessions/--old--", "schedules"])
    expect(mode(join(agent, dir)).toString(8), dir).toBe("700");
  // The user's own files in the agent dir are not ours to change.
  expect(mode(join(agent, "settings.json")).toString(8)).toBe("644");
  rmSync(agent, { recursive: true, force: true });
}, 60_000);

test("a missing agent dir is made 0700 (as pi makes it)", () => {
  const agent = join(world.root, "fresh", "agent");
  const r = spawnSync(EXE, ["sessions", "--json"], {
    env: { ...env(), PI_CODING_AGENT_DIR: agent },
    encoding: "utf8",
  });
  expect(r.status, r.stderr).toBe(0);
  expect(mode(agent).toString(8)).toBe("700");
  expect(mode(join(agent, "subagents.db")).toString(8)).toBe("600");
}, 60_000);
