// Owner-only files (src/host/private-files.ts) on the real filesystem, with the umask a Debian login has (022): the
// store starts 0600 and SQLite gives its -wal and -shm files that mode; a cache under the shared temp folder that
// another user made first, or a symlink there, is refused; the control socket's fallback for a long data dir is a
// private folder with a random name, never a name another user can take first.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { bunDbOpener } from "../../../src/host/sqlite-bun.ts";
import { cacheRoot, cacheRootPath, privateDir, privateTree } from "../../../src/host/private-files.ts";
import { socketPath } from "../../../src/control/registry.ts";

const root = mkdtempSync(join(tmpdir(), "private-files-"));
const before = process.umask(0o022);
afterAll(() => {
  process.umask(before);
  rmSync(root, { recursive: true, force: true });
});
const mode = (p: string) => (lstatSync(p).mode & 0o777).toString(8);

test("the store is 0600 from its first byte, and so are its -wal and -shm files", () => {
  const dir = privateDir(join(root, "a", "b"));
  expect(mode(dir)).toBe("700");
  expect(mode(join(root, "a"))).toBe("700");
  const file = join(dir, "subagents.db");
  const db = bunDbOpener(Database)(file);
  db.exec("CREATE TABLE t (x)");
  db.run("INSERT INTO t VALUES (1)");
  for (const p of [file, `${file}-wal`, `${file}-shm`]) expect(mode(p), p).toBe("600");
  db.close();
  // An older version's 0644 database (and sidecars) is fixed when it is opened.
  chmodSync(file, 0o644);
  const again = bunDbOpener(Database)(file);
  expect(mode(file)).toBe("600");
  expect(mode(`${file}-wal`)).toBe("600");
  again.close();
});

test("privateTree walks an open folder once; a folder already 0700 is taken as done", () => {
  const dir = join(root, "tree");
  mkdirSync(join(dir, "x"), { recursive: true, mode: 0o755 });
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, "x", "f.jsonl"), "x");
  writeFileSync(join(dir, "exe"), "#!/bin/sh\n");
  chmodSync(join(dir, "x"), 0o755);
  chmodSync(join(dir, "x", "f.jsonl"), 0o644);
  chmodSync(join(dir, "exe"), 0o755);
  symlinkSync("/etc/passwd", join(dir, "link"));
  privateTree(dir);
  expect(mode(dir)).toBe("700");
  expect(mode(join(dir, "x"))).toBe("700");
  expect(mode(join(dir, "x", "f.jsonl"))).toBe("600");
  expect(mode(join(dir, "exe"))).toBe("700");
  // A symlink is never followed: what it points at keeps its mode.
  expect(mode("/etc/passwd")).toBe("644");
});

test("a cache under the shared temp folder: ours and 0700, else refused (another user's, a symlink, open)", () => {
  const base = tmpdir();
  const dir = cacheRootPath(base);
  expect(dir).toBe(join(base, `subagents-${process.getuid?.()}`));
  rmSync(dir, { recursive: true, force: true });
  try {
    expect(cacheRoot(base)).toBe(dir);
    expect(mode(dir)).toBe("700");
    rmSync(dir, { recursive: true });
    // Another user's folder of that name (made first) is not used.
    if (process.getuid?.() === 0) {
      mkdirSync(dir, { mode: 0o777 });
      chmodSync(dir, 0o777);
      spawnSync("chown", ["65534:65534", dir]);
      expect(() => cacheRoot(base)).toThrow(/not a private folder of this user/);
      rmSync(dir, { recursive: true });
    }
    // Nor a symlink someone put there.
    const elsewhere = mkdtempSync(join(root, "elsewhere-"));
    symlinkSync(elsewhere, dir);
    expect(() => cacheRoot(base)).toThrow(/not a private folder/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // Under the home's cache it is `subagents`, made 0700 (an older 0755 one is closed).
  const home = join(root, "home-cache");
  mkdirSync(join(home, "subagents"), { recursive: true, mode: 0o755 });
  chmodSync(join(home, "subagents"), 0o755);
  expect(cacheRoot(home)).toBe(join(home, "subagents"));
  expect(mode(join(home, "subagents"))).toBe("700");
});

test("the control socket of a long data dir lives in a private folder with a random name", () => {
  const long = join(root, "x".repeat(120));
  const sock = socketPath(long, 4242);
  expect(sock).not.toContain(long);
  expect(sock).not.toMatch(/subagents-\d+-4242\.sock$/);
  expect(sock.endsWith("/4242.sock")).toBe(true);
  expect(Buffer.byteLength(sock)).toBeLessThan(100);
  expect(mode(dirname(sock))).toBe("700");
  expect(lstatSync(dirname(sock)).uid).toBe(process.getuid?.() ?? lstatSync(dirname(sock)).uid);
  // The same folder for every socket of this process; a short data dir keeps its own control/.
  expect(dirname(socketPath(long, 4243))).toBe(dirname(sock));
  expect(socketPath(join(root, "d"), 1)).toBe(join(root, "d", "control", "1.sock"));
});
