// Worktree isolation's git side against real repositories in temp folders: the snapshot of the user's current
// state, the user's tree and index left alone, a branch only when something changed, and cleanup of a worktree
// whose owner was SIGKILLed.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWorktreeHost } from "../../../src/host/git-worktree.ts";
import { removalsDone } from "../../../src/host/cow-probe.ts";
import { branchSlug, isolationLines, overlaps } from "../../../src/core/run/launch/isolation.ts";
import {
  gitIn as git,
  makeRepo,
  subagentBranches,
  userState as userStateOf,
  worktreeList,
} from "../../support/git-repo.ts";

const root = mkdtempSync(join(tmpdir(), "subagents-iso-"));
// The layers' removal runs in the background (cow-probe.ts removeLater): waited for before the folder goes.
afterAll(async () => {
  await removalsDone();
  rmSync(root, { recursive: true, force: true });
});

const gitIn = (cwd: string, ...args: string[]) => git(root, cwd, ...args);
const dirtyRepo = (name: string) => makeRepo(root, join(root, name));
const userState = (repo: string) => userStateOf(root, repo);
const branches = (repo: string) => subagentBranches(root, repo);
const worktrees = (repo: string) => worktreeList(root, repo);
/** A task's own copy of what git tracks (the cheapest tree that is a folder of its own, written from outside here). */
const OFF = { deps: "off", local: true } as const;

test("the worktree starts from what the user sees; the user's tree and index stay as they were", async () => {
  const repo = dirtyRepo("snapshot");
  const before = userState(repo);
  const host = createWorktreeHost(join(root, "data1"));
  const wt = await host.create({ cwd: join(repo, "sub"), id: "0123456789abcdef", name: "Fix the thing!", view: OFF });
  expect(wt.cwd).toBe(join(wt.path, "sub"));
  expect(wt.path.startsWith(join(root, "data1", "worktrees"))).toBe(true);
  expect(readFileSync(join(wt.path, "a.txt"), "utf8")).toBe("one\ntwo (uncommitted)\n");
  expect(readFileSync(join(wt.path, "new.txt"), "utf8")).toBe("untracked\n");
  expect(existsSync(join(wt.path, "debug.log"))).toBe(false);
  writeFileSync(join(wt.cwd, "keep.txt"), "changed by the child\n");
  writeFileSync(join(wt.path, "added.txt"), "x\ny\n");
  const r = await host.finish(wt);
  expect(r.branch).toBe("subagents/fix-the-thing-01234567");
  expect(r.files.map((f) => f.path).sort()).toEqual(["added.txt", "sub/keep.txt"]);
  expect(r.diffstat).toBe("2 files changed, 3 insertions(+), 1 deletion(-)");
  expect(userState(repo)).toEqual(before);
  expect(existsSync(wt.path)).toBe(false);
  expect(worktrees(repo)).toHaveLength(1);
  // The branch holds the user's uncommitted state (a snapshot commit) with the child's commit on top.
  expect(gitIn(repo, "show", `${r.branch}:a.txt`)).toBe("one\ntwo (uncommitted)\n");
  expect(gitIn(repo, "log", "--format=%s", r.branch!).split("\n").filter(Boolean)).toEqual([
    "subagents: Fix the thing!",
    "subagents: snapshot of uncommitted changes (base of an isolated task)",
    "first",
  ]);
  // A later run of the same session gets a branch of its own.
  const again = await host.create({ cwd: repo, id: "0123456789abcdef", name: "Fix the thing!", view: OFF });
  writeFileSync(join(again.path, "a.txt"), "other\n");
  expect((await host.finish(again)).branch).toBe("subagents/fix-the-thing-01234567-2");
});

test("a task that changed nothing leaves no branch; a clean tree is based on HEAD itself", async () => {
  const repo = dirtyRepo("unchanged");
  gitIn(repo, "add", "-A");
  gitIn(repo, "commit", "-q", "-m", "clean");
  const host = createWorktreeHost(join(root, "data2"));
  const wt = await host.create({ cwd: repo, id: "feedfacefeedface", name: "look only", view: OFF });
  expect(wt.base).toBe(gitIn(repo, "rev-parse", "HEAD").trim());
  writeFileSync(join(wt.path, "ignored.log"), "build output\n");
  const r = await host.finish(wt);
  expect(r.branch).toBeUndefined();
  expect(r.files).toEqual([]);
  expect(branches(repo)).toEqual([]);
  expect(worktrees(repo)).toHaveLength(1);
});

test("a cwd outside any repository is not located (the engine fails the task before anything runs)", async () => {
  const plain = join(root, "plain");
  mkdirSync(plain, { recursive: true });
  const host = createWorktreeHost(join(root, "data3"));
  expect(await host.locate(plain)).toBeNull();
  await expect(host.create({ cwd: plain, id: "aaaaaaaaaaaaaaaa", name: "x", view: OFF })).rejects.toThrow(
    "not inside a git repository",
  );
  expect(existsSync(join(root, "data3", "worktrees", "aaaaaaaaaaaaaaaa"))).toBe(false);
});

test("a worktree whose owner was SIGKILLed: the next clean-up keeps its changes on a branch and removes it", async () => {
  const repo = dirtyRepo("killed");
  const data = join(root, "data4");
  const ready = join(root, "owner-ready");
  const owner = Bun.spawn({
    cmd: [
      process.execPath,
      "-e",
      `
      const { createWorktreeHost } = await import(${JSON.stringify(join(import.meta.dir, "..", "..", "..", "src", "host", "git-worktree.ts"))});
      const wt = await createWorktreeHost(${JSON.stringify(data)}).create({ cwd: ${JSON.stringify(repo)}, id: "deadbeefdeadbeef", name: "killed task", view: { deps: "off", local: true } });
      require("node:fs").writeFileSync(wt.path + "/work.txt", "half done\\n");
      // As if the owner died in the middle of its own 'git add': the lock stays behind.
      const gitDir = require("node:child_process").execFileSync("git", ["rev-parse", "--absolute-git-dir"], { cwd: wt.path, encoding: "utf8" }).trim();
      require("node:fs").writeFileSync(gitDir + "/index.lock", "");
      require("node:fs").writeFileSync(${JSON.stringify(ready)}, wt.path);
      setInterval(() => {}, 1000);`,
    ],
    stdout: "ignore",
    stderr: "inherit",
  });
  const deadline = Date.now() + 20_000;
  while (!existsSync(ready) && Date.now() < deadline) await Bun.sleep(50);
  const wtPath = readFileSync(ready, "utf8");
  // No git worktree is made: the task has a folder of its own.
  expect(worktrees(repo)).toHaveLength(1);
  // A process that looked for stale worktrees while the owner was alive, and later resumes the same session.
  const early = createWorktreeHost(data);
  expect((await early.cleanStale()).worktrees).toEqual([]);
  owner.kill("SIGKILL");
  await owner.exited;
  const resumed = await early.create({ cwd: repo, id: "deadbeefdeadbeef", name: "killed task", view: OFF });
  expect(readFileSync(join(resumed.path, "a.txt"), "utf8")).toBe("one\ntwo (uncommitted)\n");
  await early.finish(resumed);
  const host = createWorktreeHost(data);
  expect(existsSync(wtPath)).toBe(false);
  expect(worktrees(repo)).toHaveLength(1);
  expect(branches(repo)).toEqual(["subagents/killed-task-deadbeef"]);
  expect(gitIn(repo, "show", "subagents/killed-task-deadbeef:work.txt")).toBe("half done\n");
  // Nothing left to clean, and a live owner's worktree is never touched.
  expect((await host.cleanStale()).worktrees).toEqual([]);
  const mine = await host.create({ cwd: repo, id: "1111222233334444", name: "alive", view: OFF });
  expect((await createWorktreeHost(data).cleanStale()).worktrees).toEqual([]);
  expect(existsSync(mine.path)).toBe(true);
  await host.finish(mine);
}, 30_000);

test("eight worktrees made at once in one repository (a call's isolated tasks) and two processes doing so: all made, all finished", async () => {
  const repo = dirtyRepo("many-at-once");
  const host = createWorktreeHost(join(root, "data-many"));
  const ids = Array.from({ length: 8 }, (_, i) => `${i}`.repeat(16));
  const made = await Promise.all(ids.map((id) => host.create({ cwd: repo, id, name: `task ${id[0]}` })));
  expect(made.map((w) => existsSync(join(w.path, "a.txt")))).toEqual(ids.map(() => true));
  // Another process making its own in the same repository meanwhile (git's race is between processes too).
  const other = Bun.spawn({
    cmd: [
      process.execPath,
      "-e",
      `import { createWorktreeHost } from ${JSON.stringify(join(import.meta.dir, "../../../src/host/git-worktree.ts"))};
       const h = createWorktreeHost(${JSON.stringify(join(root, "data-many-2"))});
       const ws = await Promise.all(["a","b","c","d"].map((c) => h.create({ cwd: ${JSON.stringify(repo)}, id: c.repeat(16), name: c, view: { deps: "off", local: true } })));
       await Promise.all(ws.map((w) => h.finish(w)));`,
    ],
    stdout: "pipe",
    stderr: "pipe",
  });
  const results = await Promise.all(made.map((w) => host.finish(w)));
  const [code, err] = [await other.exited, await new Response(other.stderr).text()];
  expect(code, err).toBe(0);
  expect(results.filter((r) => r.error)).toEqual([]);
  expect(worktrees(repo)).toHaveLength(1);
}, 120_000);

test("overlap and result lines name the branch, the files and the tasks that touched the same file", () => {
  const iso = (branch: string | undefined, files: string[]) => ({
    base: "b",
    repo: "/r",
    files: files.map((path) => ({ path, added: 1, deleted: 0 })),
    diffstat: `${files.length} file changed`,
    ...(branch ? { branch } : {}),
  });
  const outcomes = [
    { name: "one", sessionId: "s1", result: { isolation: iso("subagents/one-s1", ["a.txt", "b.txt"]) } },
    { name: "two", sessionId: "s2", result: { isolation: iso("subagents/two-s2", ["a.txt"]) } },
    { name: "three", sessionId: "s3", result: { isolation: iso(undefined, []) } },
    { name: "plain", sessionId: "s4", result: {} },
  ];
  expect(overlaps(outcomes)).toEqual([{ path: "a.txt", tasks: ["one", "two"] }]);
  expect(isolationLines(outcomes)).toEqual([
    "one: branch subagents/one-s1: 2 file changed (a.txt, b.txt) — subagents apply s1",
    "two: branch subagents/two-s2: 1 file changed (a.txt) — subagents apply s2",
    "three: no changes, no branch",
    "overlap: a.txt changed by one, two",
  ]);
  expect(branchSlug("  ### ")).toBe("task");
  expect(branchSlug("Refactor: the Parser (v2)")).toBe("refactor-the-parser-v2");
});
