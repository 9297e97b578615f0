// Planted code below the top of a sandboxed child's folder (nested-scan.ts, git-config-safe.ts, nested-report.ts) on
// real folders and real git repositories: the walk finds nested and bare repositories, `.git` files, project config in
// subfolders and the index's gitlinks (index versions 2, 3 and 4, SHA-1 and SHA-256); a git config keeps only keys
// that hold data, written so that git reads exactly that; what the child made is disarmed, moved aside and named.
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBunHost } from "../../../../src/host/bun.ts";
import { bunDbOpener } from "../../../../src/host/sqlite-bun.ts";
import { indexGitlinks, SCAN_DEPTH, scanFolder } from "../../../../src/core/run/runners/nested-scan.ts";
import { parseGitConfig, safeGitConfig } from "../../../../src/core/run/runners/git-config-safe.ts";
import { disarmGitDir, quarantine } from "../../../../src/core/run/runners/nested-report.ts";
import { sandboxGuard } from "../../../../src/core/run/runners/sandbox-guard.ts";
import { setPlantedAside } from "../../../../src/core/run/runners/guard-report.ts";

const host = createBunHost(bunDbOpener(Database));
const root = mkdtempSync(join(tmpdir(), "nested-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const git = (cwd: string, ...a: string[]) =>
  execFileSync("git", ["-c", "advice.addEmbeddedRepo=false", ...a], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, HOME: root },
    stdio: ["ignore", "pipe", "pipe"],
  });
const commit = (cwd: string, m: string) =>
  git(cwd, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", m);

function repo(dir: string, ...init: string[]): string {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main", ...init);
  writeFileSync(join(dir, "f"), "f\n");
  git(dir, "add", "f");
  commit(dir, "f");
  return dir;
}

test("git config: only data-holding keys stay, in canonical form; commands, includes, aliases and odd lines go", () => {
  const text = [
    "[core]",
    "\trepositoryformatversion = 0",
    "\tfilemode = true",
    '\tfsmonitor = "touch /x"',
    "[core] hooksPath = evil ; on the header's line",
    '[remote "origin"]',
    '\turl = "https://example.com/r.git" # comment',
    "\tfetch = +refs/heads/*:refs/remotes/origin/*",
    "\tuploadpack = touch /x",
    '[remote "bad"]',
    "\turl = ext::sh -c touch% /x",
    "[branch.main]",
    "\tremote = origin",
    "[include]",
    "\tpath = ../evil.cfg",
    '[includeIf "gitdir:/"]',
    "\tpath = /tmp/evil",
    '[filter "lfs"]',
    "\tclean = touch /x",
    "[alias]",
    "\tst = !touch /x",
    "[user]",
    '\tname = "A \\"quoted\\" name"',
    "\temail = a@b \\",
    "c",
    "[core",
    "\tpager = less",
    "garbage line without section",
  ].join("\n");
  const { text: safe, removed } = safeGitConfig(text);
  expect(removed).toEqual([
    "core.fsmonitor",
    "core.hookspath",
    "remote.origin.uploadpack",
    "remote.bad.url",
    "include.path",
    "includeif.gitdir:/.path",
    "filter.lfs.clean",
    "alias.st",
    "3 unreadable lines",
  ]);
  expect(safe).toBe(
    [
      "[core]",
      '\trepositoryformatversion = "0"',
      '\tfilemode = "true"',
      '[remote "origin"]',
      '\turl = "https://example.com/r.git"',
      '\tfetch = "+refs/heads/*:refs/remotes/origin/*"',
      '[branch "main"]',
      '\tremote = "origin"',
      "[user]",
      '\tname = "A \\"quoted\\" name"',
      '\temail = "a@b c"',
      "",
    ].join("\n"),
  );
  // git itself reads back exactly what was kept.
  const file = join(root, "safe.cfg");
  writeFileSync(file, safe);
  expect(git(root, "config", "--file", file, "--list").trim().split("\n")).toEqual([
    "core.repositoryformatversion=0",
    "core.filemode=true",
    "remote.origin.url=https://example.com/r.git",
    "remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*",
    "branch.main.remote=origin",
    'user.name=A "quoted" name',
    "user.email=a@b c",
  ]);
  // What git init and git clone write is left as it was, byte for byte.
  const r = repo(join(root, "clean"));
  const config = readFileSync(join(r, ".git", "config"), "utf8");
  expect(safeGitConfig(config)).toEqual({ text: config, removed: [] });
  expect(parseGitConfig("[a]\n\tb").lines).toEqual([{ section: "a", sub: null, key: "b", value: null }]);
});

test("the walk: nested, bare and pointed-to repositories, project config in subfolders; not into node_modules or .git, not past its depth", () => {
  const top = repo(join(root, "walk"));
  repo(join(top, "libs", "one"));
  mkdirSync(join(top, "bare", "objects"), { recursive: true });
  mkdirSync(join(top, "bare", "refs"));
  writeFileSync(join(top, "bare", "HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(top, "bare", "config"), "[core]\n\tbare = true\n");
  mkdirSync(join(top, "pointer"));
  writeFileSync(join(top, "pointer", ".git"), "gitdir: ../hidden-gd\n");
  mkdirSync(join(top, "pkg", ".pi"), { recursive: true });
  writeFileSync(join(top, "pkg", ".envrc"), "x");
  mkdirSync(join(top, "node_modules", "x", ".pi"), { recursive: true });
  repo(join(top, "node_modules", "y"));
  let deep = top;
  for (let i = 0; i <= SCAN_DEPTH; i++) deep = join(deep, `d${i}`);
  mkdirSync(join(deep, ".vscode"), { recursive: true });
  const s = scanFolder(host, top);
  expect(s.repos.sort()).toEqual([join(top, "libs", "one"), join(top, "pointer")]);
  expect(s.gitDirs.sort()).toEqual(
    [join(top, "bare"), join(top, "hidden-gd"), join(top, "libs", "one", ".git")].sort(),
  );
  expect(s.gitFiles).toEqual([{ path: join(top, "pointer", ".git"), target: "../hidden-gd" }]);
  expect(s.names.sort()).toEqual([join(top, "pkg", ".envrc"), join(top, "pkg", ".pi")]);
  expect(s.truncated).toBe(false);
});

test("the index's gitlinks: versions 2, 3 and 4, SHA-256; a split index is not guessed at", () => {
  for (const [name, prep] of [
    ["v2", () => {}],
    ["v3", (r: string) => git(r, "update-index", "--index-version", "3")],
    ["v4", (r: string) => git(r, "update-index", "--index-version", "4")],
  ] as const) {
    const top = repo(join(root, `idx-${name}`));
    // x/ä and x/ö share a first byte: v4 names the second by stripping bytes inside a character of the first.
    const subs = ["a/b/sub1", "a/b/sub2", "x/ä/sub4", "x/ö/sub5", "zz/long/path/to/sub3"];
    for (const sub of subs) repo(join(top, sub));
    git(top, "add", ...subs);
    writeFileSync(join(top, "a", "b", "file"), "x");
    git(top, "add", "a/b/file");
    prep(top);
    // v3's extended flags: an intent-to-add entry.
    writeFileSync(join(top, "ita"), "x");
    git(top, "add", "-N", "ita");
    expect(indexGitlinks(host, join(top, ".git")), name).toEqual(subs);
    expect(scanFolder(host, top, { top, gitDir: join(top, ".git") }).gitlinks).toEqual(subs.map((p) => join(top, p)));
  }
  const sha256 = repo(join(root, "idx-sha256"), "--object-format=sha256");
  repo(join(sha256, "s"), "--object-format=sha256");
  git(sha256, "add", "s");
  expect(indexGitlinks(host, join(sha256, ".git"))).toEqual(["s"]);
  const split = repo(join(root, "idx-split"));
  git(split, "update-index", "--split-index");
  expect(indexGitlinks(host, join(split, ".git"))).toBeNull();
  expect(indexGitlinks(host, join(root, "no-such", ".git"))).toEqual([]);
});

test("disarming a planted git folder: its config keeps data only, hooks and pointers go; a quarantined path moves aside", () => {
  const r = repo(join(root, "planted"));
  git(r, "config", "core.fsmonitor", "touch /x");
  git(r, "config", "remote.origin.url", "https://example.com/x.git");
  writeFileSync(join(r, ".git", "hooks", "pre-commit"), "#!/bin/sh\ntouch /x\n");
  writeFileSync(join(r, ".git", "config.worktree"), "[core]\n\tpager = x\n");
  writeFileSync(join(r, ".git", "commondir"), "../../elsewhere\n");
  const removed = disarmGitDir(host.within(root), join(r, ".git"));
  expect(removed).toEqual(["core.fsmonitor", "hooks/pre-commit", "config.worktree", "commondir"]);
  expect(git(r, "config", "--get", "remote.origin.url").trim()).toBe("https://example.com/x.git");
  expect(() => git(r, "config", "--get", "core.fsmonitor")).toThrow();
  expect(existsSync(join(r, ".git", "hooks", "pre-commit.sample"))).toBe(true);
  git(r, "status");
  // A linked worktree's folder keeps the commondir that leads to a repository protected during the run.
  const main = repo(join(root, "main-wt"));
  git(main, "worktree", "add", "-q", join(root, "linked"));
  const wtDir = join(main, ".git", "worktrees", "linked");
  expect(disarmGitDir(host.within(root), wtDir, (gd) => gd === join(main, ".git"))).toEqual([]);
  expect(existsSync(join(wtDir, "commondir"))).toBe(true);
  const p = join(root, "q", ".envrc");
  mkdirSync(join(root, "q"));
  writeFileSync(p, "x");
  writeFileSync(`${p}.quarantined`, "older");
  expect(quarantine(host.within(root), p)).toBe(`${p}.quarantined-2`);
  expect(existsSync(p)).toBe(false);
});

test("before and after a run: existing nested repositories and config are protected, new ones disarmed, moved aside and named; what the person opened stays", () => {
  const top = repo(join(root, "run"));
  const near = repo(join(top, "vendor", "lib"));
  mkdirSync(join(top, "app", ".vscode"), { recursive: true });
  const g = sandboxGuard(host, { roots: [top], writable: [top], home: root, cwd: top, open: ["app2/.envrc"] });
  const how = (p: string) => g.binds.find((b) => b.path === p)?.how;
  expect(how(join(near, ".git", "config"))).toBe("ro");
  expect(how(join(near, ".git", "hooks"))).toBe("ro");
  expect(how(join(top, "app", ".vscode"))).toBe("ro");
  // What the child did (without a sandbox here: the report looks at the folder, whatever wrote it).
  repo(join(top, "made"));
  git(join(top, "made"), "config", "core.pager", "touch /x");
  git(top, "add", "made");
  mkdirSync(join(top, "app", ".claude"));
  mkdirSync(join(top, "app2"));
  writeFileSync(join(top, "app2", ".envrc"), "opened on purpose");
  const warned = setPlantedAside(host, g).join("\n");
  expect(warned).toContain("taken out: made (core.pager)");
  expect(warned).toContain("the child added made to the repository as submodules");
  expect(warned).toContain("moved aside: app/.claude → app/.claude.quarantined");
  expect(warned).not.toContain("app2");
  expect(existsSync(join(top, "app2", ".envrc"))).toBe(true);
  expect(existsSync(join(top, "app", ".vscode"))).toBe(true);
  expect(() => git(join(top, "made"), "config", "--get", "core.pager")).toThrow();
});

test("the clean-up never follows the child's links: a planted repository whose hooks and config point at the person's files, a gitlink to another project, a link in the middle of a path — the links go, the person's files stay", () => {
  // The person's files outside the task folder.
  const home = join(root, "victim-home");
  mkdirSync(join(home, "somefolder"), { recursive: true });
  writeFileSync(join(home, "somefolder", "authorized_keys"), "ssh-ed25519 KEEP\n");
  writeFileSync(join(home, "somefile"), "[core]\n\tpager = less\n[alias]\n\tco = checkout\n");
  const other = repo(join(home, "other-project"));
  git(other, "config", "core.hooksPath", "hooks-of-mine");
  writeFileSync(join(other, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n");
  const top = repo(join(root, "links"));
  mkdirSync(join(top, "pkg"));
  const g = sandboxGuard(host, { roots: [top], writable: [top], home, cwd: top });
  // What the child did: a repository of its own with hooks and config linked to the person's files …
  const made = join(top, "made");
  mkdirSync(join(made, ".git", "objects"), { recursive: true });
  mkdirSync(join(made, ".git", "refs"));
  writeFileSync(join(made, ".git", "HEAD"), "ref: refs/heads/main\n");
  symlinkSync(join(home, "somefolder"), join(made, ".git", "hooks"));
  symlinkSync(join(home, "somefile"), join(made, ".git", "config"));
  // … one whose hooks folder is real but whose hooks are links, one reached through a link in the middle …
  const made2 = repo(join(top, "made2"));
  symlinkSync(join(home, "somefolder", "authorized_keys"), join(made2, ".git", "hooks", "post-checkout"));
  symlinkSync(home, join(top, "pkg", "via"));
  // … a gitlink whose git folder is the person's other project, and a dangling .envrc link in a subfolder.
  mkdirSync(join(top, "sub"));
  writeFileSync(join(top, "sub", ".git"), `gitdir: ${join(other, ".git")}\n`);
  git(top, "add", "sub");
  symlinkSync(join(home, "not-yet"), join(top, "pkg", ".envrc"));
  const warned = setPlantedAside(host, g).join("\n");
  // The person's files: as they were.
  expect(readFileSync(join(home, "somefolder", "authorized_keys"), "utf8")).toBe("ssh-ed25519 KEEP\n");
  expect(readFileSync(join(home, "somefile"), "utf8")).toContain("pager = less");
  expect(git(other, "config", "--get", "core.hooksPath").trim()).toBe("hooks-of-mine");
  expect(existsSync(join(other, ".git", "hooks", "pre-commit"))).toBe(true);
  expect(existsSync(join(home, "not-yet"))).toBe(false);
  // The links themselves are gone or moved aside, and named.
  expect(existsSync(join(made, ".git", "hooks")) || lstatExists(join(made, ".git", "hooks"))).toBe(false);
  expect(lstatExists(join(made, ".git", "config"))).toBe(false);
  expect(lstatExists(join(made2, ".git", "hooks", "post-checkout"))).toBe(false);
  expect(warned).toContain("made (config (a link), hooks (a link))");
  expect(warned).toContain("hooks/post-checkout");
  expect(lstatExists(join(top, "pkg", ".envrc.quarantined"))).toBe(true);
  expect(warned).toContain("pkg/.envrc → pkg/.envrc.quarantined");
  expect(warned).toContain("the child added sub to the repository as submodules");
  // A config turned into a folder, a FIFO in its place: gone, nothing waited on.
  const odd = join(top, "odd", ".git");
  mkdirSync(join(odd, "config", "deeper"), { recursive: true });
  symlinkSync(join(home, "somefile"), join(odd, "config", "deeper", "link"));
  mkdirSync(join(odd, "hooks"));
  execFileSync("mkfifo", [join(odd, "hooks", "pre-commit")]);
  expect(disarmGitDir(host.within(top), odd)).toEqual(["config (a folder)", "hooks/pre-commit"]);
  expect(readFileSync(join(home, "somefile"), "utf8")).toContain("pager = less");
});

const lstatExists = (p: string) => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};
