// An isolated task's tree against real repositories: a layer over the repository at its own path (every ignored file
// there, builds that clean, a folder renamed, the child's commits and refs kept in the layer), the owner's branch made
// from the content alone, the copy where no layer can be had (a private git folder borrowing the objects), clones on
// the reflink engine, a setup's changes sealed into the base, and an owner SIGKILLed mid-task. The user's tree is
// fingerprinted before and after: nothing is written there.
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
import { includedEntries, ignoredFolders } from "../../../src/host/worktree-view.ts";
import { overlayWay, removalsDone } from "../../../src/host/cow-probe.ts";
import { gitIn as git, treeHash } from "../../support/git-repo.ts";
import { ensureEngine, REFLINK_MOUNT } from "../../support/engines.ts";

const root = mkdtempSync(join(tmpdir(), "subagents-layer-"));
// The layers' removal runs in the background (cow-probe.ts removeLater): waited for before the folder goes.
afterAll(async () => {
  await removalsDone();
  rmSync(root, { recursive: true, force: true });
});
const gitIn = (cwd: string, ...args: string[]) => git(root, cwd, ...args);

function write(file: string, text: string): void {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
}

/** An npm-like project: a dependency, a workspace package's own node_modules, a build folder holding a tracked file,
 *  build info and yarn PnP files (ignored files, not folders), an ignored .env and a `.worktreeinclude` that also
 *  names an untracked file git does not ignore. */
function project(base: string): string {
  const repo = join(base, "proj");
  mkdirSync(repo, { recursive: true });
  gitIn(repo, "init", "-q", "-b", "main");
  gitIn(repo, "config", "user.email", "me@example.com");
  gitIn(repo, "config", "user.name", "Me");
  write(join(repo, ".gitignore"), "node_modules/\ndist/\n.env\n*.log\n__pycache__/\n*.tsbuildinfo\n.pnp.*\n");
  write(join(repo, "src", "app.js"), "module.exports = 1;\n");
  write(join(repo, "dist", "keep.txt"), "tracked in an ignored folder\n");
  gitIn(repo, "add", "-A");
  gitIn(repo, "add", "-f", "dist/keep.txt");
  gitIn(repo, "commit", "-q", "-m", "first");
  write(join(repo, "node_modules", "dep", "index.js"), "module.exports = 'user';\n");
  write(join(repo, "node_modules", ".bin", "tool"), "#!/bin/sh\necho tool\n");
  write(join(repo, "packages", "p", "node_modules", "x", "i.js"), "x\n");
  write(join(repo, "dist", "out.js"), "built\n");
  write(join(repo, "tsconfig.tsbuildinfo"), '{"version":"5"}\n');
  write(join(repo, ".pnp.cjs"), "module.exports = 'pnp';\n");
  write(join(repo, ".env"), "API_TOKEN=tok_1234567890abcdefXYZ\nPORT=3000\n");
  write(join(repo, "notes.txt"), "untracked, not ignored\n");
  write(join(repo, "secret.txt"), "untracked, not ignored, named in .worktreeinclude\n");
  write(join(repo, ".worktreeinclude"), ".env\nsecret.txt\n");
  return repo;
}

/** Runs a script in cwd (inside the task's view when `enter` is given); its output, or a failure naming why. */
function inView(enter: string[] | undefined, cwd: string, script: string): string {
  const argv = [...(enter ?? []), "/bin/sh", "-c", script];
  const r = spawnSync(argv[0], argv.slice(1), { cwd, encoding: "utf8", env: { ...process.env, HOME: root } });
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

const overlayHere = async (data: string) => {
  const way = await overlayWay(join(data, "worktrees"));
  if (typeof way === "string") console.warn(`\n*** SKIPPING a layer test: ${way} ***\n`);
  return typeof way === "object";
};
/** The owner adds its branch and the branch's objects to the user's git folder, nothing else: those, and what git
 *  rewrites on its own (the index's stat cache), are left out of the fingerprint; other refs are not. */
const userTree = (repo: string) =>
  treeHash(repo, (p) =>
    [".git/index", ".git/logs", ".git/objects", ".git/refs/heads/subagents"].some((s) => p.startsWith(s)),
  );

test("git's rules: ignored folders for a copy's venvs, and .worktreeinclude's ignored entries (masked secrets)", async () => {
  const repo = project(join(root, "rules"));
  expect(await ignoredFolders(repo, join(root, "rules-data"))).toEqual(["node_modules", "packages/p/node_modules"]);
  expect(await includedEntries(repo)).toEqual([".env"]);
});

test("a layer: the whole tree at its own path, builds that clean and rename, the child's git in the layer; the branch holds its content only", async () => {
  const base = join(root, "layer");
  const repo = project(base);
  const data = join(base, "data");
  if (!(await overlayHere(data))) return;
  const before = userTree(repo);
  const host = createWorktreeHost(data);
  const wt = await host.create({
    cwd: join(repo, "src"),
    id: "0123456789abcdef",
    name: "deps",
    view: { deps: "auto", local: true },
  });
  const view = wt.view!;
  expect(view.mechanism).toBe("overlay");
  expect([wt.path, wt.cwd]).toEqual([repo, join(repo, "src")]);
  expect(view.included).toEqual([".env"]);
  expect(view.note).toBe(
    "secret.txt named in .worktreeinclude but not ignored by git: left out of the task's snapshot and branch (add it to .gitignore)",
  );
  const seen = inView(
    view.enter,
    wt.cwd,
    [
      "cd .. && git status --porcelain && cat .pnp.cjs tsconfig.tsbuildinfo node_modules/dep/index.js",
      // A build that cleans: the folders of the user's tree are removed and made again, renamed, a file replaced.
      "rm -rf node_modules dist && mkdir dist && echo rebuilt > dist/out.js && mv packages packages2",
      'echo \'{"version":"6"}\' > tsconfig.tsbuildinfo && echo code > src/app.js && echo task > secret.txt',
      // What stays behind: a FIFO, a link out of the folder, the child's own commits and a moved branch.
      "mkfifo pipe && ln -s /etc/passwd passwd && git add -A && git commit -qm mine && git update-ref refs/heads/other HEAD",
      "id -u",
    ].join(" && "),
  );
  // secret.txt is in the user's tree, but not in the task's start: untracked there.
  expect(seen).toBe(
    `?? secret.txt\nmodule.exports = 'pnp';\n{"version":"5"}\nmodule.exports = 'user';\n${process.getuid!()}\n`,
  );
  // A second process in the view (the child after its setup) sees what the first one did.
  expect(inView(view.enter, wt.cwd, "ls -A ..; cat ../dist/out.js")).toBe(
    ".env\n.git\n.gitignore\n.pnp.cjs\n.worktreeinclude\ndist\nnotes.txt\npackages2\npasswd\npipe\nsecret.txt\nsrc\ntsconfig.tsbuildinfo\nrebuilt\n",
  );
  expect(userTree(repo)).toBe(before);
  const r = await host.finish(wt);
  expect(userTree(repo)).toBe(before);
  expect(r.view).toEqual({ mechanism: "overlay", included: [".env"] });
  // dist/keep.txt was tracked: its deletion is the child's; nothing ignored, nothing .worktreeinclude names.
  expect(r.files.map((f) => f.path)).toEqual(["dist/keep.txt", "src/app.js"]);
  expect(gitIn(repo, "show", `${r.branch}:src/app.js`)).toBe("code\n");
  expect(gitIn(repo, "branch", "--list", "other")).toBe("");
  expect(gitIn(repo, "log", "--format=%s", r.branch!)).toBe(
    "subagents: deps\nsubagents: snapshot of uncommitted changes (base of an isolated task)\nfirst\n",
  );
  expect(r.left?.join("\n")).toContain("pipe — not a regular file");
  expect(r.left?.join("\n")).toContain("passwd — symbolic links that point out of the folder");
  await removalsDone();
  expect(readdirSync(join(data, "worktrees")).filter((n) => !n.startsWith("."))).toEqual([]);
});

test("the copy, where no layer can be had: its own git folder borrows the objects; off: what git tracks and the included files", async () => {
  const base = join(root, "copy");
  const repo = project(base);
  const before = userTree(repo);
  const host = createWorktreeHost(join(base, "data"));
  const copy = await host.create({
    cwd: repo,
    id: "2222222222222222",
    name: "copy",
    view: { deps: "copy", local: true },
  });
  expect(copy.view?.mechanism).toBe("copy");
  expect(copy.view?.enter).toBeUndefined();
  expect(copy.path).toBe(join(base, "data", "worktrees", "2222222222222222"));
  expect(copy.view?.bytes).toBeGreaterThan(0);
  expect(copy.view?.note).toStartWith('subagents.worktreeDeps is "copy"');
  const seen = inView(
    undefined,
    copy.cwd,
    "git status --porcelain; git log --format=%s; cat node_modules/dep/index.js .pnp.cjs; echo changed > node_modules/dep/index.js; echo edit >> src/app.js; rm dist/keep.txt; git commit -qam x; git branch evil",
  );
  expect(seen).toBe(
    "?? secret.txt\nsubagents: snapshot of uncommitted changes (base of an isolated task)\nfirst\nmodule.exports = 'user';\nmodule.exports = 'pnp';\n",
  );
  const r = await host.finish(copy);
  expect(r.files.map((f) => f.path)).toEqual(["dist/keep.txt", "src/app.js"]);
  expect(gitIn(repo, "branch", "--list", "evil")).toBe("");
  expect(existsSync(copy.path)).toBe(false);
  const off = await host.create({ cwd: repo, id: "1111111111111111", name: "off", view: { deps: "off", local: true } });
  expect(off.view?.mechanism).toBe("none");
  expect(existsSync(join(off.path, "node_modules"))).toBe(false);
  expect(readFileSync(join(off.path, ".env"), "utf8")).toContain("API_TOKEN=");
  expect(existsSync(join(off.path, "secret.txt"))).toBe(false);
  expect((await host.finish(off)).branch).toBeUndefined();
  expect(userTree(repo)).toBe(before);
  // A repository holding pi's agent folder (a home folder under git): no layer over it, and no copy of all of it.
  const inner = createWorktreeHost(join(repo, "node_modules", ".data"));
  const home = await inner.create({
    cwd: repo,
    id: "7777777777777777",
    name: "home",
    view: { deps: "auto", local: true },
  });
  expect(home.view?.mechanism).toBe("none");
  expect(home.view?.note).toContain("pi's agent folder, where the task's layer is kept, is inside the repository");
  expect(existsSync(join(home.path, "node_modules"))).toBe(false);
  await inner.finish(home);
});

test("reflink: where the repository and the data folder share a filesystem with clones, a task that is no local process gets clones", async () => {
  const skip = ensureEngine("reflink");
  if (skip) return console.warn(skip);
  const base = mkdtempSync(join(REFLINK_MOUNT, "view-"));
  try {
    const repo = project(base);
    const host = createWorktreeHost(join(base, "data"));
    // A container's or a Slurm node's child cannot enter our namespace: clones instead of a layer.
    const wt = await host.create({
      cwd: repo,
      id: "3333333333333333",
      name: "clone",
      view: { deps: "auto", local: false },
    });
    expect(wt.view?.mechanism).toBe("reflink");
    writeFileSync(join(wt.path, "node_modules", "dep", "index.js"), "changed in the clone\n");
    expect(readFileSync(join(repo, "node_modules", "dep", "index.js"), "utf8")).toBe("module.exports = 'user';\n");
    await host.finish(wt);
    expect(existsSync(wt.path)).toBe(false);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test("a Python venv: at its own path in a layer (its writes in the layer), named for the copy in a copy", async () => {
  const base = join(root, "venv");
  const repo = join(base, "py");
  mkdirSync(repo, { recursive: true });
  gitIn(repo, "init", "-q", "-b", "main");
  write(join(repo, ".gitignore"), ".venv/\n");
  write(join(repo, "src", "myproj", "__init__.py"), "VALUE = 'user'\n");
  gitIn(repo, "add", "-A");
  gitIn(repo, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "first");
  const venv = join(repo, ".venv");
  const site = join(venv, "lib", "python3.11", "site-packages");
  write(join(venv, "pyvenv.cfg"), "home = /usr/bin\n");
  write(join(venv, "bin", "pip"), `#!${venv}/bin/python\nimport sys\n`);
  chmodSync(join(venv, "bin", "pip"), 0o755);
  symlinkSync("/usr/bin/python3", join(venv, "bin", "python"));
  write(join(site, "__editable__.myproj.pth"), `${repo}/src\n`);
  const show =
    "cat .venv/bin/pip .venv/lib/python3.11/site-packages/__editable__.myproj.pth; readlink .venv/bin/python";
  for (const deps of ["auto", "copy"] as const) {
    const host = createWorktreeHost(join(base, `data-${deps}`));
    const wt = await host.create({ cwd: repo, id: "4444444444444444", name: "py", view: { deps, local: true } });
    const at = wt.view?.mechanism === "overlay" ? repo : wt.path;
    expect(
      inView(wt.view?.enter, wt.cwd, `${show}; echo x >> .venv/lib/python3.11/site-packages/__editable__.myproj.pth`),
    ).toBe(`#!${at}/.venv/bin/python\nimport sys\n${at}/src\n/usr/bin/python3\n`);
    expect(readFileSync(join(site, "__editable__.myproj.pth"), "utf8")).toBe(`${repo}/src\n`);
    await host.finish(wt);
  }
});

test("a setup's changes to tracked files become the base: the branch holds the child's work only", async () => {
  const base = join(root, "seal");
  const repo = project(base);
  const data = join(base, "data");
  const host = createWorktreeHost(data);
  const layered = await overlayHere(data);
  const wt = await host.create({
    cwd: repo,
    id: "5555555555555555",
    name: "sealed",
    view: { deps: layered ? "auto" : "copy", local: true },
  });
  const before = wt.base;
  expect(await host.seal(wt)).toEqual([]);
  expect(wt.base).toBe(before);
  inView(
    wt.view?.enter,
    wt.cwd,
    "echo generated > src/app.js && mkdir -p node_modules/gen && echo 1 > node_modules/gen/i.js",
  );
  expect(await host.seal(wt)).toEqual(["src/app.js"]);
  expect(wt.base).not.toBe(before);
  // The child starts from the sealed base: a clean status.
  expect(inView(wt.view?.enter, wt.cwd, "git status --porcelain; echo work > child.txt")).toBe("?? secret.txt\n");
  const r = await host.finish(wt);
  expect(r.files.map((f) => f.path)).toEqual(["child.txt"]);
  expect(gitIn(repo, "log", "--format=%s", `${r.base}..${r.branch}`).trim()).toBe("subagents: sealed");
});

test("an owner SIGKILLed mid-task: the next clean-up keeps its work on a branch and removes its layer and a probe it left", async () => {
  const base = join(root, "stale");
  const repo = project(base);
  const data = join(base, "data");
  if (!(await overlayHere(data))) return;
  const host = createWorktreeHost(data);
  const wt = await host.create({
    cwd: repo,
    id: "6666666666666666",
    name: "killed",
    view: { deps: "auto", local: true },
  });
  inView(wt.view?.enter, wt.cwd, "echo half > half.txt");
  // As the dead owner left it: its record names a process that is gone; overlayfs's work folder is mode 000.
  const dead = spawnSync("true").pid!;
  const record = join(data, "worktrees", `${wt.id}.json`);
  writeFileSync(record, JSON.stringify({ ...JSON.parse(readFileSync(record, "utf8")), pid: dead, startTime: "1" }));
  chmodSync(join(data, "worktrees", `${wt.id}.layer`, "work", "work"), 0);
  mkdirSync(join(data, "worktrees", `.cow-probe-${dead}-abc`, "work"), { recursive: true });
  expect(
    createWorktreeHost(data)
      .staleWorktrees()
      .worktrees.map((w) => w.action),
  ).toEqual(["keep"]);
  expect((await createWorktreeHost(data).cleanStale()).worktrees.map((w) => w.action)).toEqual(["keep"]);
  await removalsDone();
  expect(readdirSync(join(data, "worktrees")).filter((n) => !n.startsWith("."))).toEqual([]);
  expect(gitIn(repo, "show", "subagents/killed-66666666:half.txt")).toBe("half\n");
});
