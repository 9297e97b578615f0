// Which of our temp folders count as left behind (host/temp-dirs.ts): those whose owner's PID and start time name no
// running process — in the system temp folder, and in /tmp where a long TMPDIR sends the short socket folders.
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { ownTag } from "../../../src/host/process-identity.ts";
import { removeStaleTempDirs, staleTempDirs } from "../../../src/host/temp-dirs.ts";
import { asUser, ensureTestUser } from "../../support/test-user.ts";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A folder named as a process that does not run made it (PID 2^22 + 1 is above Linux's PID limit). */
function leftBy(base: string): string {
  const dir = mkdtempSync(join(base, `subagents-${2 ** 22 + 1}.12345-`));
  made.push(dir);
  return dir;
}

test("a long TMPDIR: folders left in it and in /tmp (where the socket folders go) are both found; a live one is not", () => {
  const parent = mkdtempSync("/tmp/td-");
  const long = join(parent, "a-temp-folder-path-long-enough-for-the-fallback");
  made.push(parent);
  mkdirSync(long, { recursive: true });
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = long;
  try {
    const inTmpdir = leftBy(long);
    const inTmp = leftBy("/tmp");
    const live = mkdtempSync(join(long, `subagents-${ownTag()}-`));
    made.push(live);
    const stale = staleTempDirs();
    expect(stale).toContain(inTmpdir);
    // Another owner of the suite (same /tmp, same time) may have swept it already: that sweep is this code too.
    expect(stale.includes(inTmp) || !existsSync(inTmp), `${inTmp} not taken for left behind`).toBe(true);
    expect(stale).not.toContain(live);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
});

/** What another local user can put under our names in the shared temp folder. */
function planted(owner: { uid: number; gid: number } | null = null) {
  const base = 2 ** 22 + 7;
  const secret = mkdtempSync("/tmp/td-secret-");
  made.push(secret);
  mkdirSync(join(secret, "inner"));
  writeFileSync(join(secret, "inner", "keep"), "theirs\n");
  chmodSync(secret, 0o700);
  const link = `/tmp/subagents-${base}.1-${Math.random().toString(36).slice(2, 8).padEnd(6, "x")}`;
  symlinkSync(join(secret, "inner"), link);
  const file = `/tmp/subagents-${base + 1}.1-${Math.random().toString(36).slice(2, 8).padEnd(6, "x")}`;
  writeFileSync(file, "a file\n");
  made.push(link, file);
  // A folder of another user's under our name (root's, when an ordinary user sweeps; the test user's, when root does).
  const dir = mkdtempSync(`/tmp/subagents-${base + 2}.1-`);
  made.push(dir);
  if (owner) chownSync(dir, owner.uid, owner.gid);
  return { secret, link, file, dir };
}

test("another user's symlink, file or folder under our names in /tmp is skipped, never followed nor removed, and a sweep never throws", () => {
  const user = ensureTestUser();
  const p = planted(typeof user === "string" ? null : user);
  // Our own stale folder, with a link in it to a file of ours elsewhere: the folder goes, the link's target stays.
  const mine = leftBy("/tmp");
  const target = join(p.secret, "mine-target");
  writeFileSync(target, "kept\n");
  symlinkSync(target, join(mine, "link"));
  mkdirSync(join(mine, "sub"));
  symlinkSync(p.secret, join(mine, "sub", "dirlink"));
  const stale = staleTempDirs();
  expect(stale).not.toContain(p.link);
  expect(stale).not.toContain(p.file);
  if (typeof user !== "string") expect(stale).not.toContain(p.dir);
  const removed = removeStaleTempDirs();
  expect(removed.includes(mine) || !existsSync(mine)).toBe(true);
  expect(existsSync(mine)).toBe(false);
  expect(readFileSync(target, "utf8")).toBe("kept\n");
  expect(readFileSync(join(p.secret, "inner", "keep"), "utf8")).toBe("theirs\n");
  expect(lstatSync(p.link).isSymbolicLink()).toBe(true);
  expect(existsSync(p.file)).toBe(true);
});

test("as an ordinary user: a symlink planted by another user into a folder this user cannot enter does not crash the sweep (run, delegate and prune start it)", () => {
  const user = ensureTestUser();
  if (typeof user === "string") return console.warn(user);
  // Planted by root (the other user here) into root's own 0700 folder: the test user cannot even stat the target.
  const p = planted();
  const script = `import { removeStaleTempDirs, privateTempDir } from ${JSON.stringify(join(import.meta.dir, "../../../src/host/temp-dirs.ts"))};
privateTempDir();
const removed = removeStaleTempDirs();
console.log(JSON.stringify({ removed }));`;
  const home = mkdtempSync("/tmp/td-home-");
  made.push(home);
  chownSync(home, user.uid, user.gid);
  writeFileSync(join(home, "sweep.ts"), script);
  const [cmd, ...args] = asUser(user, [process.execPath, join(home, "sweep.ts")]);
  const r = spawnSync(cmd, args, {
    env: { PATH: "/usr/bin:/bin", HOME: home, TMPDIR: "/tmp", BUN_INSTALL_CACHE_DIR: join(home, ".bun") },
    encoding: "utf8",
  });
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  const out = JSON.parse(r.stdout.trim().split("\n").at(-1) as string) as { removed: string[] };
  expect(out.removed).not.toContain(p.link);
  expect(out.removed).not.toContain(p.file);
  expect(out.removed).not.toContain(p.dir);
  expect(existsSync(p.dir)).toBe(true);
  expect(lstatSync(p.link).isSymbolicLink()).toBe(true);
  expect(readFileSync(join(p.secret, "inner", "keep"), "utf8")).toBe("theirs\n");
});
