// An isolated task's view of its repository's ignored files, against real repositories: which folders and which
// `.worktreeinclude` entries git's own rules give, each way of showing them (an overlay in a namespace, a
// copy-on-write clone on the reflink engine's xfs, a copy), what the task's writes do to the user's copy (nothing),
// a Python venv whose own path is rewritten for the task, and nothing left once the worktree is finished.
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWorktreeHost } from "../../../src/host/git-worktree.ts";
import { ignoredFolders, includedEntries } from "../../../src/host/worktree-view.ts";
import { overlayWay } from "../../../src/host/cow-probe.ts";
import { gitIn as git } from "../../support/git-repo.ts";
import { ensureEngine, REFLINK_MOUNT } from "../../support/engines.ts";

const root = mkdtempSync(join(tmpdir(), "subagents-view-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const gitIn = (cwd: string, ...args: string[]) => git(root, cwd, ...args);

function write(file: string, text: string): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
}

/** An npm-like project: a dependency, a workspace package's own node_modules, a build folder holding a tracked file,
 *  byte-code caches, an ignored .env and a secrets folder, and a `.worktreeinclude`. */
function project(base: string): string {
  const repo = join(base, "proj");
  mkdirSync(repo, { recursive: true });
  gitIn(repo, "init", "-q", "-b", "main");
  gitIn(repo, "config", "user.email", "me@example.com");
  gitIn(repo, "config", "user.name", "Me");
  write(join(repo, ".gitignore"), "node_modules/\ndist/\n.env\n*.log\n__pycache__/\nsecrets/\n.cache/\n");
  write(join(repo, "src", "app.js"), "module.exports = 1;\n");
  write(join(repo, "dist", "keep.txt"), "tracked in an ignored folder\n");
  gitIn(repo, "add", "-A");
  gitIn(repo, "add", "-f", "dist/keep.txt");
  gitIn(repo, "commit", "-q", "-m", "first");
  write(join(repo, "node_modules", "dep", "index.js"), "module.exports = 'user';\n");
  write(join(repo, "node_modules", ".bin", "tool"), "#!/bin/sh\necho tool\n");
  write(join(repo, "packages", "p", "node_modules", "x", "i.js"), "x\n");
  write(join(repo, "dist", "out.js"), "built\n");
  write(join(repo, "src", "__pycache__", "m.pyc"), "pyc\n");
  write(join(repo, "secrets", "token.txt"), "t\n");
  write(join(repo, ".cache", "big"), "c\n");
  write(join(repo, ".env"), "API_TOKEN=tok_1234567890abcdefXYZ\nPORT=3000\n");
  write(join(repo, "debug.log"), "log\n");
  write(join(repo, "notes.txt"), "untracked, not ignored\n");
  // `.cache/` is ignored but not asked for; `src/app.js` is tracked, `notes.txt` not ignored: neither is included.
  write(join(repo, ".worktreeinclude"), ".env\nsecrets/\nsrc/app.js\nnotes.txt\n*.log\n!debug.log\n");
  return repo;
}

test("git's own rules say what is carried: ignored folders (outermost, no byte-code caches), and only what .worktreeinclude names that is really ignored", async () => {
  const repo = project(join(root, "rules"));
  const data = join(root, "rules-data");
  expect(await ignoredFolders(repo, data)).toEqual([".cache", "node_modules", "packages/p/node_modules", "secrets"]);
  expect(await includedEntries(repo)).toEqual([".env", "secrets"]);
  // A data folder inside the repository (a home folder that is a repository) is never carried into itself.
  expect(await ignoredFolders(repo, join(repo, ".cache", "subagents"))).toEqual([
    "node_modules",
    "packages/p/node_modules",
    "secrets",
  ]);
  // No .worktreeinclude: nothing is included.
  rmSync(join(repo, ".worktreeinclude"));
  expect(await includedEntries(repo)).toEqual([]);
});

/** Runs argv in cwd (the worktree's view when `enter` is given) and returns its output; fails the test on exit ≠ 0. */
function inView(enter: string[] | undefined, cwd: string, script: string): string {
  const argv = [...(enter ?? []), "/bin/sh", "-c", script];
  const r = spawnSync(argv[0], argv.slice(1), { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

const overlayHere = async (data: string) => typeof (await overlayWay(join(data, "worktrees"))) === "object";

test("overlay: the task sees the user's folders, writes land in its own layer, the branch and the user's tree get none of it", async () => {
  const base = join(root, "overlay");
  const repo = project(base);
  const data = join(base, "data");
  if (!(await overlayHere(data))) {
    console.warn(`\n*** SKIPPING the overlay view test: ${await overlayWay(join(data, "worktrees"))} ***\n`);
    return;
  }
  const host = createWorktreeHost(data);
  const wt = await host.create({
    cwd: repo,
    id: "0123456789abcdef",
    name: "deps",
    view: { deps: "auto", local: true },
  });
  const view = wt.view!;
  expect(view.mechanism).toBe("overlay");
  expect(view.folders).toEqual([".cache", "node_modules", "packages/p/node_modules", "secrets"]);
  // secrets/ is already carried as an ignored folder; .env is copied in.
  expect(view.included).toEqual([".env"]);
  expect(readFileSync(join(wt.path, ".env"), "utf8")).toContain("API_TOKEN=");
  expect(view.enter?.length).toBeGreaterThan(0);
  // Outside the namespace the mount points are empty: git, and whoever looks from outside, see nothing there.
  expect(readdirSync(join(wt.path, "node_modules"))).toEqual([]);
  const seen = inView(
    view.enter,
    wt.cwd,
    "cat node_modules/dep/index.js; echo \"module.exports = 'task';\" > node_modules/dep/index.js; mkdir node_modules/own; echo new > node_modules/own/f; rm node_modules/.bin/tool; echo code > src/app.js; git status --porcelain; id -u",
  );
  expect(seen).toBe(`module.exports = 'user';\n M src/app.js\n${process.getuid!()}\n`);
  expect(readFileSync(join(repo, "node_modules", "dep", "index.js"), "utf8")).toBe("module.exports = 'user';\n");
  expect(existsSync(join(repo, "node_modules", ".bin", "tool"))).toBe(true);
  expect(existsSync(join(repo, "node_modules", "own"))).toBe(false);
  // A second process in the view (the child after its setup) sees what the first one wrote.
  expect(inView(view.enter, wt.cwd, "cat node_modules/dep/index.js node_modules/own/f")).toBe(
    "module.exports = 'task';\nnew\n",
  );
  const r = await host.finish(wt);
  expect(r.view).toEqual({ mechanism: "overlay", folders: view.folders, included: [".env"] });
  expect(r.files.map((f) => f.path)).toEqual(["src/app.js"]);
  expect(gitIn(repo, "ls-tree", "-r", "--name-only", r.branch!).split("\n").filter(Boolean).sort()).toEqual([
    ".gitignore",
    ".worktreeinclude",
    "dist/keep.txt",
    "notes.txt",
    "src/app.js",
  ]);
  expect(existsSync(join(data, "worktrees", "0123456789abcdef.view"))).toBe(false);
  expect(readdirSync(join(data, "worktrees")).filter((n) => !n.startsWith("."))).toEqual([]);
});

test("off: no folders, but .worktreeinclude still applies; copy: a real copy, its size said", async () => {
  const base = join(root, "copy");
  const repo = project(base);
  const host = createWorktreeHost(join(base, "data"));
  const off = await host.create({ cwd: repo, id: "1111111111111111", name: "off", view: { deps: "off", local: true } });
  expect(off.view).toEqual({ mechanism: "none", folders: [], included: [".env", "secrets"] });
  expect(existsSync(join(off.path, "node_modules", "dep"))).toBe(false);
  expect(readFileSync(join(off.path, "secrets", "token.txt"), "utf8")).toBe("t\n");
  await host.finish(off);
  const copy = await host.create({
    cwd: repo,
    id: "2222222222222222",
    name: "copy",
    view: { deps: "copy", local: true },
  });
  expect(copy.view?.mechanism).toBe("copy");
  expect(copy.view?.enter).toBeUndefined();
  expect(copy.view?.bytes).toBeGreaterThan(0);
  expect(copy.view?.note).toBe('subagents.worktreeDeps is "copy"');
  writeFileSync(join(copy.path, "node_modules", "dep", "index.js"), "changed in the copy\n");
  expect(readFileSync(join(repo, "node_modules", "dep", "index.js"), "utf8")).toBe("module.exports = 'user';\n");
  const r = await host.finish(copy);
  expect(r.branch).toBeUndefined();
  expect(existsSync(copy.path)).toBe(false);
});

test("reflink: where the repository and the data folder share a filesystem with clones, a task that is no local process gets clones", async () => {
  const skip = ensureEngine("reflink");
  if (skip) return;
  const base = mkdtempSync(join(REFLINK_MOUNT, "view-"));
  try {
    const repo = project(base);
    const host = createWorktreeHost(join(base, "data"));
    // A container's or a Slurm node's child cannot enter our namespace: clones instead of an overlay.
    const wt = await host.create({
      cwd: repo,
      id: "3333333333333333",
      name: "clone",
      view: { deps: "auto", local: false },
    });
    expect(wt.view?.mechanism).toBe("reflink");
    expect(wt.view?.note).toBeUndefined();
    writeFileSync(join(wt.path, "node_modules", "dep", "index.js"), "changed in the clone\n");
    expect(readFileSync(join(repo, "node_modules", "dep", "index.js"), "utf8")).toBe("module.exports = 'user';\n");
    await host.finish(wt);
    expect(existsSync(wt.path)).toBe(false);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("a Python venv names the task's worktree in its scripts and path files; the user's venv is only read", async () => {
  const base = join(root, "venv");
  const repo = join(base, "py");
  mkdirSync(repo, { recursive: true });
  gitIn(repo, "init", "-q", "-b", "main");
  write(join(repo, ".gitignore"), ".venv/\n");
  // With worktreeDeps "off" the venv still comes, by name.
  write(join(repo, ".worktreeinclude"), ".venv/\n");
  write(join(repo, "src", "myproj", "__init__.py"), "VALUE = 'user'\n");
  gitIn(repo, "add", "-A");
  gitIn(repo, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "first");
  const venv = join(repo, ".venv");
  const site = join(venv, "lib", "python3.11", "site-packages");
  write(join(venv, "pyvenv.cfg"), "home = /usr/bin\n");
  write(join(venv, "bin", "pip"), `#!${venv}/bin/python\nimport sys\n`);
  chmodSync(join(venv, "bin", "pip"), 0o755);
  write(join(venv, "bin", "activate"), `VIRTUAL_ENV="${venv}"\nOTHER="${repo}-old/x"\n`);
  symlinkSync("/usr/bin/python3", join(venv, "bin", "python"));
  write(join(site, "__editable__.myproj.pth"), `${repo}/src\n`);
  write(join(site, "mod.py"), `PATH = "${repo}"\n`);
  for (const deps of ["auto", "copy", "off"] as const) {
    const host = createWorktreeHost(join(base, `data-${deps}`));
    const wt = await host.create({ cwd: repo, id: "4444444444444444", name: "py", view: { deps, local: true } });
    const show =
      "cat .venv/bin/pip .venv/bin/activate .venv/lib/python3.11/site-packages/__editable__.myproj.pth .venv/lib/python3.11/site-packages/mod.py; test -x .venv/bin/pip && readlink .venv/bin/python";
    expect(inView(wt.view?.enter, wt.cwd, show)).toBe(
      `#!${wt.path}/.venv/bin/python\nimport sys\nVIRTUAL_ENV="${wt.path}/.venv"\nOTHER="${repo}-old/x"\n${wt.path}/src\n` +
        // Only the scripts and path files are rewritten; a module that names the path is the package's own business.
        `PATH = "${repo}"\n/usr/bin/python3\n`,
    );
    expect(readFileSync(join(venv, "bin", "pip"), "utf8")).toBe(`#!${venv}/bin/python\nimport sys\n`);
    expect(readFileSync(join(site, "__editable__.myproj.pth"), "utf8")).toBe(`${repo}/src\n`);
    await host.finish(wt);
  }
});

test("a setup's changes to tracked files become the worktree's base: the branch holds the child's work only", async () => {
  const base = join(root, "seal");
  const repo = project(base);
  const host = createWorktreeHost(join(base, "data"));
  const wt = await host.create({
    cwd: repo,
    id: "5555555555555555",
    name: "sealed",
    view: { deps: "off", local: true },
  });
  const before = wt.base;
  expect(await host.seal(wt)).toEqual([]);
  expect(wt.base).toBe(before);
  writeFileSync(join(wt.path, "src", "app.js"), "module.exports = 'generated';\n");
  expect(await host.seal(wt)).toEqual(["src/app.js"]);
  expect(wt.base).not.toBe(before);
  writeFileSync(join(wt.path, "child.txt"), "the child's work\n");
  const r = await host.finish(wt);
  expect(r.files.map((f) => f.path)).toEqual(["child.txt"]);
  expect(gitIn(repo, "log", "--format=%s", `${r.base}..${r.branch}`).trim()).toBe("subagents: sealed");
});

test("an owner SIGKILLed while its task ran: the next clean-up removes the task's overlay layers and a probe it left", async () => {
  const base = join(root, "stale");
  const repo = project(base);
  const data = join(base, "data");
  const host = createWorktreeHost(data);
  const wt = await host.create({
    cwd: repo,
    id: "6666666666666666",
    name: "killed",
    view: { deps: "auto", local: true },
  });
  // As the dead owner left it: its record names a process that is gone, overlayfs's work folder is mode 000.
  const dead = spawnSync("true").pid!;
  const record = join(data, "worktrees", `${wt.id}.json`);
  writeFileSync(record, JSON.stringify({ ...JSON.parse(readFileSync(record, "utf8")), pid: dead, startTime: "1" }));
  const viewDir = join(data, "worktrees", `${wt.id}.view`);
  mkdirSync(join(viewDir, "work", "9", "work"), { recursive: true });
  chmodSync(join(viewDir, "work", "9", "work"), 0);
  mkdirSync(join(data, "worktrees", `.cow-probe-${dead}-abc`, "work"), { recursive: true });
  expect((await createWorktreeHost(data).cleanStale()).worktrees.map((w) => w.action)).toEqual(["keep"]);
  expect(readdirSync(join(data, "worktrees"))).toEqual([]);
  expect(gitIn(repo, "worktree", "list").trim().split("\n")).toHaveLength(1);
});
