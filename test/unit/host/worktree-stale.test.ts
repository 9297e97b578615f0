// An isolated task whose owner ended at any moment: only a whole tree's changes are kept (on a branch the run's
// record names), a half-made or half-set-up one is removed with nothing kept, what such an owner left beside it is
// swept, and `prune --dry-run`'s listing is what the clean-up then does. Real repositories; the dead owner's records
// are written as a SIGKILL leaves them (the kill loop in test/reliability/kill-points.test.ts kills for real). The
// tasks' trees here are copies at a path of their own (written from outside, as the child would write them).
import { afterAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWorktreeHost } from "../../../src/host/git-worktree.ts";
import { removalsDone } from "../../../src/host/cow-probe.ts";
import type { IsolationResult } from "../../../src/core/isolation-types.ts";
import { gitIn as git, makeRepo, subagentBranches, worktreeList } from "../../support/git-repo.ts";

const root = mkdtempSync(join(tmpdir(), "subagents-stale-"));
// The layers' removal runs in the background (cow-probe.ts removeLater): waited for before the folder goes.
afterAll(async () => {
  await removalsDone();
  rmSync(root, { recursive: true, force: true });
});
const gitIn = (cwd: string, ...args: string[]) => git(root, cwd, ...args);
const OFF = { deps: "off", local: true } as const;

/** A process that has ended: its pid names nobody (the owner a SIGKILL took). */
const deadPid = () => spawnSync("true").pid!;

/** Rewrites a task's record as its owner's death leaves it: a dead pid, the phase it had reached. */
function orphan(data: string, id: string, phase?: string): void {
  const file = join(data, "worktrees", `${id}.json`);
  const rec = JSON.parse(readFileSync(file, "utf8"));
  writeFileSync(file, JSON.stringify({ ...rec, pid: deadPid(), startTime: "1", phase }));
}

function recorder() {
  const told: { runId: number; iso: IsolationResult }[] = [];
  return { told, setRunIsolation: (runId: number, iso: IsolationResult) => told.push({ runId, iso }) };
}

test("the run's record knows where the task's work is from its making, then the branch; a finish cut short makes no second branch", async () => {
  const repo = makeRepo(root, join(root, "told"));
  const records = recorder();
  const host = createWorktreeHost(join(root, "data-told"), records);
  const wt = await host.create({ cwd: repo, id: "aaaa000011112222", name: "told", runId: 7, view: OFF });
  expect(records.told).toEqual([
    { runId: 7, iso: { base: wt.base, repo, files: [], diffstat: "", worktree: wt.path } },
  ]);
  writeFileSync(join(wt.path, "x.txt"), "x\n");
  const r = await host.finish(wt);
  expect(records.told.at(-1)).toEqual({ runId: 7, iso: { ...r, view: undefined } });
  expect(r.branch).toBe("subagents/told-aaaa0000");
  // The same content on the same base is on the next branch already (a clean-up killed after making it, before it
  // removed the copy): named again, not made twice.
  const again = await host.create({ cwd: repo, id: "aaaa000011112222", name: "told", runId: 8, view: OFF });
  writeFileSync(join(again.path, "y.txt"), "y\n");
  const index = join(root, "told.index");
  const env = { ...process.env, HOME: root, GIT_INDEX_FILE: index };
  const g = (...args: string[]) =>
    spawnSync("git", args, { cwd: repo, env, encoding: "utf8", input: "y\n" }).stdout.trim();
  g("read-tree", again.base);
  g("update-index", "--add", "--cacheinfo", `100644,${g("hash-object", "-w", "--stdin")},y.txt`);
  const tree = g("write-tree");
  gitIn(
    repo,
    "branch",
    "-f",
    "subagents/told-aaaa0000-2",
    g("-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", tree, "-p", again.base, "-m", "earlier"),
  );
  expect((await host.finish(again)).branch).toBe("subagents/told-aaaa0000-2");
  expect(subagentBranches(root, repo)).toEqual(["subagents/told-aaaa0000", "subagents/told-aaaa0000-2"]);
});

test("an owner dead while its task's tree was made or set up: removed, nothing kept; a whole one's work kept; dry run says the same", async () => {
  const repo = makeRepo(root, join(root, "phases"), false);
  const data = join(root, "data-phases");
  const records = recorder();
  const host = createWorktreeHost(data, records);
  const making = await host.create({ cwd: repo, id: "1111000011110000", name: "making", runId: 1, view: OFF });
  const setup = await host.create({ cwd: repo, id: "2222000022220000", name: "setup", runId: 2, view: OFF });
  const ready = await host.create({ cwd: repo, id: "3333000033330000", name: "ready", runId: 3, view: OFF });
  // A copy cut short (a.txt not there yet) and a setup's half-done output: neither is anyone's work.
  rmSync(join(making.path, "a.txt"));
  host.settingUp(setup);
  writeFileSync(join(setup.path, "generated.txt"), "half\n");
  writeFileSync(join(ready.path, "work.txt"), "the child's\n");
  orphan(data, making.id, "making");
  orphan(data, setup.id, "setup");
  orphan(data, ready.id, "ready");
  // What such owners leave beside: an index copy of an older version (no record), a record half-rewritten.
  const oldIndex = join(data, "worktrees", "9999000099990000.index");
  writeFileSync(oldIndex, "x");
  utimesSync(oldIndex, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
  const halfRecord = join(data, "worktrees", `${ready.id}.json.${deadPid()}.tmp`);
  writeFileSync(halfRecord, "{");
  const fresh = createWorktreeHost(data, records);
  const planned = fresh.staleWorktrees();
  expect(planned.worktrees.map((w) => [w.id, w.action]).sort()).toEqual([
    [making.id, "discard"],
    [setup.id, "discard"],
    [ready.id, "keep"],
  ]);
  expect(planned.leftovers.sort()).toEqual([oldIndex, halfRecord].sort());
  const done = await fresh.cleanStale();
  expect(done.worktrees.map((w) => [w.id, w.action]).sort()).toEqual(
    planned.worktrees.map((w) => [w.id, w.action]).sort(),
  );
  expect(done.leftovers.sort()).toEqual(planned.leftovers.sort());
  expect(done.worktrees.find((w) => w.id === ready.id)?.branch).toBe("subagents/ready-33330000");
  // One branch, the child's: no branch deletes a.txt, none holds the setup's output.
  expect(subagentBranches(root, repo)).toEqual(["subagents/ready-33330000"]);
  expect(gitIn(repo, "diff", "--name-status", ready.base, "subagents/ready-33330000").trim()).toBe("A\twork.txt");
  // No git worktree is ever made.
  expect(worktreeList(root, repo)).toHaveLength(1);
  expect(existsSync(join(repo, ".git", "worktrees"))).toBe(false);
  await removalsDone();
  expect(readdirSync(join(data, "worktrees")).filter((n) => !n.startsWith("."))).toEqual([]);
  // Each run's record was told what became of its task's tree.
  const last = (runId: number) => records.told.filter((t) => t.runId === runId).at(-1)?.iso;
  expect(last(1)).toEqual({ base: making.base, repo, files: [], diffstat: "" });
  expect(last(2)).toEqual({ base: setup.base, repo, files: [], diffstat: "" });
  expect(last(3)?.branch).toBe("subagents/ready-33330000");
  expect(fresh.staleWorktrees()).toEqual({ worktrees: [], leftovers: [] });
});

test("a clean-up killed after claiming a record: the next one finishes the task; nothing of it is left", async () => {
  const repo = makeRepo(root, join(root, "cut"), false);
  const data = join(root, "data-cut");
  const wt = await createWorktreeHost(data).create({ cwd: repo, id: "4444000044440000", name: "cut", view: OFF });
  orphan(data, wt.id, "making");
  // A clean-up that renamed the record to claim it, then was killed before writing its own.
  renameSync(join(data, "worktrees", `${wt.id}.json`), join(data, "worktrees", `${wt.id}.cleaning-${deadPid()}`));
  const done = await createWorktreeHost(data).cleanStale();
  expect(done.worktrees.map((w) => w.action)).toEqual(["discard"]);
  expect(existsSync(wt.path)).toBe(false);
  await removalsDone();
  expect(readdirSync(join(data, "worktrees")).filter((n) => !n.startsWith("."))).toEqual([]);
});
