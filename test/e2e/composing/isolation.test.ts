// Worktree isolation end to end: real pi children (CLI) against the scripted model server, writing with pi's
// own `write` tool in real git repositories; then `subagents apply`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { BUN, cli, piWorld, REPO, type PiWorld, summaryOf, taskWhy } from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";
import { gitIn, makeRepo, subagentBranches, userState, worktreeList } from "../../support/git-repo.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const writer = (text: string) =>
  script([
    { tool: "write", args: { path: "shared.txt", content: `${text}\n` } },
    { finalize: { status: "SUCCESS", result: `wrote ${text}` } },
  ]);
/** What a task leaves in the data folder's worktrees/ (not the overlay probe's finding): nothing after a run. */
const ourWorktrees = () =>
  existsSync(join(world.root, "worktrees"))
    ? readdirSync(join(world.root, "worktrees")).filter((n) => !n.startsWith("."))
    : [];

test("two isolated tasks writing the same file: user's tree and index untouched, two branches, the overlap named, no worktree left", async () => {
  const repo = makeRepo(world.root, join(world.root, "repo-two"));
  const before = userState(world.root, repo);
  const r = await cli(
    world,
    [
      "delegate",
      "--isolation",
      "worktree",
      "--name",
      "alpha",
      "--name",
      "beta",
      `A ${writer("from alpha")}`,
      `B ${writer("from beta")}`,
      "--json",
    ],
    { cwd: join(repo, "sub") },
  );
  expect(r.code).toBe(0);
  const [a, b] = summaryOf(r.json);
  expect(a.isolation.branch).toBe(`subagents/alpha-${a.sessionId.slice(0, 8)}`);
  expect(b.isolation.branch).toBe(`subagents/beta-${b.sessionId.slice(0, 8)}`);
  // The child ran in the task's subfolder of the worktree: that is where its relative path landed.
  expect(a.isolation.files).toEqual([{ path: "sub/shared.txt", added: 1, deleted: 0 }]);
  expect(a.isolation.diffstat).toBe("1 file changed, 1 insertion(+)");
  expect(r.json.at(-1)!.overlaps).toEqual([{ path: "sub/shared.txt", tasks: ["alpha", "beta"] }]);
  expect(userState(world.root, repo)).toEqual(before);
  expect(existsSync(join(repo, "sub", "shared.txt"))).toBe(false);
  expect(subagentBranches(world.root, repo).sort()).toEqual([a.isolation.branch, b.isolation.branch].sort());
  expect(gitIn(world.root, repo, "show", `${b.isolation.branch}:sub/shared.txt`)).toBe("from beta\n");
  // The child saw the user's uncommitted edit and untracked file (the branch starts from a snapshot of them).
  expect(gitIn(world.root, repo, "show", `${a.isolation.branch}:a.txt`)).toBe("one\ntwo (uncommitted)\n");
  expect(gitIn(world.root, repo, "show", `${a.isolation.branch}:new.txt`)).toBe("untracked\n");
  expect(worktreeList(world.root, repo)).toHaveLength(1);
  expect(ourWorktrees()).toEqual([]);
  // The record keeps it: `apply --cherry-pick` takes only the sub-agent's commit, onto the still-dirty tree.
  const applied = await cli(world, ["apply", a.sessionId, "--cherry-pick"], { cwd: repo });
  expect(applied.stderr).toBe("");
  expect(applied.code).toBe(0);
  expect(readFileSync(join(repo, "sub", "shared.txt"), "utf8")).toBe("from alpha\n");
  expect(readFileSync(join(repo, "a.txt"), "utf8")).toBe("one\ntwo (uncommitted)\n");
  expect(gitIn(world.root, repo, "log", "-1", "--format=%s")).toBe("subagents: alpha\n");
  // `session ID` names the branch in its header.
  expect((await cli(world, ["session", b.sessionId])).stdout).toContain(
    `Branch  ${b.isolation.branch} · 1 file changed, 1 insertion(+) (subagents apply ${b.sessionId})`,
  );
}, 90_000);

test("apply merges a branch; a second branch touching the same lines is a conflict, named, exit 1", async () => {
  const repo = makeRepo(world.root, join(world.root, "repo-apply"), false);
  const r = await cli(
    world,
    ["delegate", "--isolation", "worktree", `A ${writer("alpha")}`, `B ${writer("beta")}`, "--json"],
    { cwd: repo },
  );
  const [a, b] = summaryOf(r.json);
  expect(r.code, `${taskWhy(a, r)}\n${taskWhy(b)}`).toBe(0);
  const first = await cli(world, ["apply", a.sessionId], { cwd: repo });
  expect(first.code).toBe(0);
  expect(first.stdout).toContain(`Applied ${a.isolation.branch}`);
  expect(readFileSync(join(repo, "shared.txt"), "utf8")).toBe("alpha\n");
  const second = await cli(world, ["apply", b.sessionId], { cwd: repo });
  expect(second.code).toBe(1);
  expect(second.stderr).toContain(`conflict applying ${b.isolation.branch} in 1 file(s):\n  shared.txt\n`);
  expect(second.stderr).toContain("git merge --abort");
  gitIn(world.root, repo, "merge", "--abort");
  // Not an isolated session, or an unknown one: a usage error that says so.
  const unknown = await cli(world, ["apply", "0000000000000000"], { cwd: repo });
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('no session "0000000000000000"');
}, 90_000);

test("a cwd outside any git repository fails that task before anything runs; nothing is written", async () => {
  const plain = join(world.root, "not-a-repo");
  mkdirSync(plain, { recursive: true });
  const requests = world.server.requests.length;
  const r = await cli(world, [
    "run",
    "default",
    `never ${writer("x")}`,
    "--isolation",
    "worktree",
    "--cwd",
    plain,
    "--json",
  ]);
  expect(r.code).toBe(1);
  const [t] = summaryOf(r.json);
  expect(t.errorCode).toBe("ISOLATION_FAILED");
  // HOME is the world's root here, so the path is shown as ~/…
  expect(t.error).toBe(
    'Isolation "worktree" needs a git repository, but ~/not-a-repo is not inside one (nothing was run)',
  );
  expect(world.server.requests.length).toBe(requests);
  expect(readdirSync(plain)).toEqual([]);
  expect((await cli(world, ["session", t.sessionId])).code).toBe(1);
  // Without git at all, the task says so instead of calling the directory no repository.
  const noGit = await cli(world, ["run", "default", "x", "--isolation", "worktree", "--json"], {
    env: { PATH: "/nonexistent", SUBAGENTS_PI: "/bin/false" },
  });
  expect(summaryOf(noGit.json)[0].error).toStartWith('Isolation "worktree" needs git: git could not be run');
  const bad = await cli(world, ["run", "default", "x", "--isolation", "container"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--isolation must be "worktree" (got "container")');
}, 60_000);

test("an isolated task that changed nothing leaves no branch and says so", async () => {
  const repo = makeRepo(world.root, join(world.root, "repo-quiet"));
  const r = await cli(
    world,
    [
      "run",
      "default",
      `just look ${script([{ tool: "bash", args: { command: "echo scratch > build.log; ls" } }, { text: "looked" }])}`,
      "--isolation",
      "worktree",
    ],
    { cwd: repo },
  );
  expect(r.code).toBe(0);
  expect(r.stderr).toContain("default: no changes, no branch");
  expect(subagentBranches(world.root, repo)).toEqual([]);
  expect(worktreeList(world.root, repo)).toHaveLength(1);
  expect(ourWorktrees()).toEqual([]);
}, 60_000);

test("the owner SIGKILLed mid-run: `subagents prune` keeps the child's work on a branch and removes the worktree", async () => {
  const repo = makeRepo(world.root, join(world.root, "repo-killed"));
  const pidFile = join(world.root, "killed-child.pid");
  // A stand-in pi that writes into its cwd (the worktree), then works forever.
  const fake = join(world.root, "writing-pi.sh");
  writeFileSync(fake, `#!/bin/sh\necho "half done" > work.txt\necho $$ > ${pidFile}\nwhile true; do sleep 1; done\n`);
  chmodSync(fake, 0o755);
  const owner = Bun.spawn({
    cmd: [BUN, join(REPO, "src/cli/main.ts"), "run", "default", "work", "--isolation", "worktree"],
    cwd: repo,
    env: { ...world.env, SUBAGENTS_PI: fake },
    stdout: "ignore",
    stderr: "ignore",
  });
  for (let i = 0; i < 200 && !existsSync(pidFile); i++) await Bun.sleep(100);
  // The task's layer is there (no git worktree is made), and its write is in it, not in the user's tree.
  expect(ourWorktrees().filter((n) => n.endsWith(".layer"))).toHaveLength(1);
  expect(existsSync(join(repo, "work.txt"))).toBe(false);
  owner.kill("SIGKILL");
  await owner.exited;
  // A real pi notices its dead owner within a second; the stand-in is stopped by hand.
  process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
  // A dry run names what prune then does.
  const dry = await cli(world, ["prune", "--dry-run", "--json"], { cwd: repo });
  expect(dry.json[0].worktrees).toMatchObject([{ action: "keep" }]);
  const pruned = await cli(world, ["prune", "--json"], { cwd: repo });
  expect(pruned.code).toBe(0);
  expect(pruned.json[0].worktrees).toMatchObject([
    { action: "keep", branch: expect.stringMatching(/^subagents\/default-/) },
  ]);
  expect(ourWorktrees()).toEqual([]);
  const [branch] = subagentBranches(world.root, repo);
  expect(branch).toStartWith("subagents/default-");
  expect(gitIn(world.root, repo, "show", `${branch}:work.txt`)).toBe("half done\n");
}, 60_000);

test("resuming an isolated session runs it isolated again, in a worktree at the same path, with a branch of its own", async () => {
  const repo = makeRepo(world.root, join(world.root, "repo-resume"), false);
  const first = await cli(world, ["run", "default", `one ${writer("first")}`, "--isolation", "worktree", "--json"], {
    cwd: repo,
  });
  const [t1] = summaryOf(first.json);
  expect(t1.isolation.branch).toBe(`subagents/default-${t1.sessionId.slice(0, 8)}`);
  const again = await cli(
    world,
    [
      "run",
      "default",
      `two ${script([{ tool: "write", args: { path: "more.txt", content: "second\n" } }, { text: "done" }])}`,
      "--session",
      t1.sessionId,
      "--json",
    ],
    { cwd: repo },
  );
  const [t2] = summaryOf(again.json);
  expect(t2.status, taskWhy(t2)).toBe("completed");
  expect(t2.isolation.branch).toBe(`${t1.isolation.branch}-2`);
  expect(t2.isolation.files.map((f: { path: string }) => f.path)).toEqual(["more.txt"]);
  expect(existsSync(join(repo, "more.txt"))).toBe(false);
  expect(ourWorktrees()).toEqual([]);
}, 60_000);

test("in pi: delegate_to_subagents tasks and a subagent call with isolation report branches and the overlap", async () => {
  const repo = makeRepo(world.root, join(world.root, "repo-pi"));
  const before = userState(world.root, repo);
  const r = await runParentPi(world, {
    runtime: "node",
    cwd: repo,
    steps: [
      {
        tool: "delegate_to_subagents",
        args: {
          tasks: [
            { name: "left", prompt: `L ${writer("left")}`, isolation: "worktree" },
            { name: "right", prompt: `R ${writer("right")}`, isolation: "worktree" },
          ],
        },
      },
      { tool: "subagent", args: { agent: "worker", task: `W ${writer("worker")}`, isolation: "worktree" } },
      { text: "parent done" },
    ],
  });
  expect(r.code, r.stderr).toBe(0);
  const [delegated, single] = r.results;
  expect(delegated.isError).toBe(false);
  const [left, right] = delegated.details.isolation.tasks;
  expect(delegated.details.isolation.overlaps).toEqual([{ path: "shared.txt", tasks: ["left", "right"] }]);
  expect(delegated.text).toContain(
    `Isolation:\nleft: branch ${left.branch}: 1 file changed, 1 insertion(+) (shared.txt) — subagents apply ${left.sessionId}\nright: branch ${right.branch}:`,
  );
  expect(delegated.text).toContain("overlap: shared.txt changed by left, right");
  expect(single.details.isolation.branch).toStartWith("subagents/worker-");
  expect(single.text).toContain(`worker: branch ${single.details.isolation.branch}: 1 file changed`);
  expect(subagentBranches(world.root, repo)).toHaveLength(3);
  expect(userState(world.root, repo)).toEqual(before);
  expect(ourWorktrees()).toEqual([]);
}, 120_000);
