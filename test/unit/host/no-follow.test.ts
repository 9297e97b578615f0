// The owner's file work in a folder a child could write (host/no-follow.ts): links planted at the end of a path or
// in its middle, a FIFO, a hard link to a file elsewhere, another user's folder on the way — each refused, and what
// they point at left as it was; ordinary files and folders are read, rewritten, renamed and removed.
import { afterAll, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import {
  chownSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { within } from "../../../src/host/no-follow.ts";
import { ensureTestUser } from "../../support/test-user.ts";

const base = mkdtempSync("/tmp/nofollow-");
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** The user's files outside the child's folder, and the child's folder with links into them. */
function world() {
  const d = mkdtempSync(join(base, "w-"));
  const home = join(d, "home");
  const root = join(d, "task");
  mkdirSync(join(home, "somefolder"), { recursive: true });
  writeFileSync(join(home, "somefolder", "id_rsa"), "KEY\n");
  writeFileSync(join(home, "somefile"), "USER CONFIG\n");
  mkdirSync(join(root, "sub", ".git"), { recursive: true });
  writeFileSync(join(root, "plain"), "plain\n");
  symlinkSync(join(home, "somefolder"), join(root, "sub", ".git", "hooks"));
  symlinkSync(join(home, "somefile"), join(root, "sub", ".git", "config"));
  symlinkSync(home, join(root, "link"));
  symlinkSync("../home", join(root, "rel"));
  return { home, root, fs: within(root) };
}

const untouched = (home: string) => {
  expect(readFileSync(join(home, "somefolder", "id_rsa"), "utf8")).toBe("KEY\n");
  expect(readFileSync(join(home, "somefile"), "utf8")).toBe("USER CONFIG\n");
};

test("a link at the end is the link: read, written, listed and removed as itself, never what it points at", () => {
  const w = world();
  expect(w.fs.info(join(w.root, "sub/.git/hooks"))?.kind).toBe("link");
  expect(w.fs.readText(join(w.root, "sub/.git/config"))).toBeNull();
  expect(w.fs.writeText(join(w.root, "sub/.git/config"), "")).toBe(false);
  expect(w.fs.list(join(w.root, "sub/.git/hooks"))).toEqual([]);
  const entries = w.fs.list(join(w.root, "sub/.git"));
  expect(entries.find((e) => e.name === "hooks")).toEqual({
    name: "hooks",
    isFile: false,
    isDirectory: false,
    isSymlink: true,
  });
  expect(w.fs.remove(join(w.root, "sub/.git/hooks"))).toBe(true);
  expect(w.fs.remove(join(w.root, "sub/.git/config"))).toBe(true);
  expect(existsSync(join(w.root, "sub/.git/hooks"))).toBe(false);
  untouched(w.home);
});

test("a link in the middle of the path (absolute or relative), `..`, or a path outside the folder: refused", () => {
  const w = world();
  for (const p of ["link/somefile", "rel/somefile", "link/somefolder/id_rsa", "sub/../link/somefile"]) {
    const abs = `${w.root}/${p}`;
    expect(w.fs.readText(abs), p).toBeNull();
    expect(w.fs.writeText(abs, "x"), p).toBe(false);
    expect(w.fs.remove(abs), p).toBe(false);
    expect(w.fs.list(abs), p).toEqual([]);
  }
  expect(w.fs.readText(`${w.root}/sub/../plain`)).toBeNull();
  expect(w.fs.remove(`${w.root}/sub/../link`)).toBe(false);
  expect(w.fs.readText(join(w.home, "somefile"))).toBeNull();
  expect(w.fs.remove(join(w.home, "somefile"))).toBe(false);
  expect(w.fs.rename(join(w.root, "link/somefile"), join(w.root, "link/x"))).toBe(false);
  untouched(w.home);
});

test("a folder removed with everything in it: its links go, what they point at stays", () => {
  const w = world();
  mkdirSync(join(w.root, "sub", "deep", "er"), { recursive: true });
  symlinkSync(join(w.home, "somefolder"), join(w.root, "sub", "deep", "er", "d"));
  symlinkSync(join(w.home, "somefile"), join(w.root, "sub", "deep", "f"));
  expect(w.fs.remove(join(w.root, "sub"))).toBe(true);
  expect(existsSync(join(w.root, "sub"))).toBe(false);
  untouched(w.home);
});

test("a FIFO is refused without waiting for a writer; a hard link to a file elsewhere is never rewritten", () => {
  const w = world();
  execFileSync("mkfifo", [join(w.root, "fifo")]);
  const t0 = Date.now();
  expect(w.fs.readText(join(w.root, "fifo"))).toBeNull();
  expect(w.fs.writeText(join(w.root, "fifo"), "x")).toBe(false);
  expect(Date.now() - t0).toBeLessThan(5000);
  expect(w.fs.info(join(w.root, "fifo"))?.kind).toBe("other");
  linkSync(join(w.home, "somefile"), join(w.root, "hard"));
  expect(w.fs.writeText(join(w.root, "hard"), "")).toBe(false);
  expect(w.fs.readText(join(w.root, "hard"))).toBeNull();
  untouched(w.home);
});

test("ordinary work: a plain file read and rewritten, a folder listed, a name moved aside in its folder", () => {
  const w = world();
  expect(w.fs.readText(join(w.root, "plain"))).toBe("plain\n");
  expect(w.fs.writeText(join(w.root, "plain"), "new\n")).toBe(true);
  expect(readFileSync(join(w.root, "plain"), "utf8")).toBe("new\n");
  expect(
    w.fs
      .list(w.root)
      .map((e) => e.name)
      .sort(),
  ).toEqual(["link", "plain", "rel", "sub"]);
  expect(w.fs.rename(join(w.root, "link"), join(w.root, "link.quarantined"))).toBe(true);
  expect(lstatSync(join(w.root, "link.quarantined")).isSymbolicLink()).toBe(true);
  // Never over an existing name, never into another folder.
  expect(w.fs.rename(join(w.root, "plain"), join(w.root, "rel"))).toBe(false);
  expect(w.fs.rename(join(w.root, "plain"), join(w.root, "sub", "plain"))).toBe(false);
  untouched(w.home);
});

test("another user's folder on the way, or another user's file: not changed", () => {
  const user = ensureTestUser();
  if (typeof user === "string") return console.warn(user);
  const w = world();
  mkdirSync(join(w.root, "theirs"));
  writeFileSync(join(w.root, "theirs", "f"), "theirs\n");
  writeFileSync(join(w.root, "their-file"), "theirs\n");
  chownSync(join(w.root, "theirs"), user.uid, user.gid);
  chownSync(join(w.root, "their-file"), user.uid, user.gid);
  expect(w.fs.writeText(join(w.root, "theirs", "f"), "")).toBe(false);
  expect(w.fs.remove(join(w.root, "theirs", "f"))).toBe(false);
  expect(w.fs.writeText(join(w.root, "their-file"), "")).toBe(false);
  expect(readFileSync(join(w.root, "theirs", "f"), "utf8")).toBe("theirs\n");
  expect(readFileSync(join(w.root, "their-file"), "utf8")).toBe("theirs\n");
});
