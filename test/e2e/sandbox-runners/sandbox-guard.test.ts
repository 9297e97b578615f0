// Protected paths inside the sandbox's writable folder (issue 40), with the real bubblewrap and the real pi as
// child: a child tries to plant code that the person's own git and pi would run later (a hook, core.fsmonitor, a
// project pi extension, a replaced .git); the writes fail inside, the person's next git commands — run here,
// outside the sandbox — run nothing of the child's, and the task's warnings name each attempt. Ordinary work
// (edit, add, commit, a branch in an isolated worktree) still works.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, summaryOf, type PiWorld } from "../../support/pi-env.ts";
import { ensureEngine } from "../../support/engines.ts";
import { gitIn, makeRepo } from "../../support/git-repo.ts";

let world: PiWorld;
let skip: string | null = null;
beforeAll(async () => {
  skip = ensureEngine("bwrap");
  world = await piWorld();
}, 600_000);
afterAll(() => world?.close());

const transcript = (q: { messages?: { content?: unknown }[] }) => JSON.stringify(q.messages ?? []);
const seenBy = (marker: string) =>
  world.server.requests
    .filter((q) => transcript(q).includes(marker))
    .map(transcript)
    .join("\n");
/** Prints WORD in capitals: what only the command's output holds, never the command's own text. */
const say = (word: string) => `echo ${word.toLowerCase()} | tr a-z A-Z`;
const probe = (marker: string, command: string) =>
  `probe ${marker} ${script([{ tool: "bash", args: { command } }, { finalize: { status: "SUCCESS", result: `done ${marker}` } }])}`;

/** A sandboxed child in `repo` that runs one command: its summary and what its model saw. */
async function inSandbox(marker: string, command: string, repo: string) {
  const r = await cli(world, ["run", "default", probe(marker, command), "--sandbox", "--json"], {
    binary: true,
    cwd: repo,
  });
  const [t] = summaryOf(r.json);
  expect(t.status, r.stderr).toBe("completed");
  return { t, seen: seenBy(marker) };
}

/** The planting attempts: each leaves a file named in `pwned` when what it planted runs. */
function plant(pwned: string) {
  return [
    `printf '#!/bin/sh\\ntouch ${pwned}/hook\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`,
    `printf '#!/bin/sh\\ntouch ${pwned}/post\\n' > .git/hooks/post-commit`,
    `git config core.fsmonitor 'touch ${pwned}/fsmonitor; false'`,
    `git config core.hooksPath planted-hooks`,
    `mkdir -p .pi/extensions && echo 'export default function () {}' > .pi/extensions/planted.ts`,
    // Moving the whole .git aside to put a planted one in its place.
    `mv .git .git-moved || ${say("NO-MOVE")}`,
  ].join("; ");
}

test("a sandboxed child cannot plant a hook, core.fsmonitor or a pi extension; the person's next git runs nothing of it; its commit works", async () => {
  if (skip) return console.warn(skip);
  const marker = `g${Date.now()}`;
  const repo = makeRepo(world.root, join(world.root, `repo-${marker}`), false);
  const pwned = join(world.root, `pwned-${marker}`);
  const hooksBefore = readdirSync(join(repo, ".git", "hooks")).sort();
  const command = `${plant(pwned)}; echo mine > work.txt && git add work.txt && git commit -q -m "child work ${marker}" && ${say(`committed-${marker}`)}`;
  const { t, seen } = await inSandbox(marker, command, repo);
  // The child was told plainly: a read-only file system (or a busy mount point for a file it tried to replace).
  expect(seen, seen.slice(-2000)).toContain("Read-only file system");
  expect(seen).toContain("NO-MOVE");
  expect(seen, seen.slice(-2000)).toContain(`COMMITTED-${marker.toUpperCase()}`);
  // The person's next git commands, with full rights, outside the sandbox.
  gitIn(world.root, repo, "status");
  writeFileSync(join(repo, "mine.txt"), "person\n");
  gitIn(world.root, repo, "add", "mine.txt");
  gitIn(world.root, repo, "commit", "-q", "-m", "person's commit");
  expect(existsSync(pwned) ? readdirSync(pwned) : []).toEqual([]);
  expect(readdirSync(join(repo, ".git", "hooks")).sort()).toEqual(hooksBefore);
  expect(
    gitIn(world.root, repo, "config", "--get-regexp", "^core\\.")
      .split("\n")
      .filter((l) => /fsmonitor|hookspath/i.test(l)),
  ).toEqual([]);
  expect(existsSync(join(repo, ".pi", "extensions"))).toBe(false);
  expect(existsSync(join(repo, ".git-moved"))).toBe(false);
  expect(gitIn(world.root, repo, "log", "--format=%s")).toContain(`child work ${marker}`);
  // The attempts are named in the task's warnings.
  const warned = (t.warnings ?? []).join("\n");
  expect(warned).toContain(".git/hooks/pre-commit");
  expect(warned).toContain(".git/config");
  expect(warned).toContain(".pi/extensions");
  // What is left behind: the empty mount point of the missing .pi, nothing else.
  expect(readdirSync(join(repo, ".pi"))).toEqual([]);
}, 120_000);

test("subagents.sandboxWritable opens a protected path on purpose (and only that one)", async () => {
  if (skip) return console.warn(skip);
  const marker = `o${Date.now()}`;
  const repo = makeRepo(world.root, join(world.root, `repo-${marker}`), false);
  world.setSubagentSettings({ sandboxWritable: [".pi/agents"] });
  try {
    writeFileSync(join(repo, "x"), "");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(repo, ".pi", "agents"), { recursive: true });
    const command = `echo '---\\nname: helper\\n---\\nhelp' > .pi/agents/helper.md && ${say("AGENT-OK")}; mkdir .pi/extensions || ${say("NO-EXT")}`;
    const r = await cli(world, ["run", "default", probe(marker, command), "--sandbox", "--json"], {
      binary: true,
      cwd: repo,
    });
    expect(summaryOf(r.json)[0].status, r.stderr).toBe("completed");
    const seen = seenBy(marker);
    expect(seen, seen.slice(-2000)).toContain("AGENT-OK");
    expect(seen).toContain("NO-EXT");
    expect(existsSync(join(repo, ".pi", "agents", "helper.md"))).toBe(true);
    expect(existsSync(join(repo, ".pi", "extensions"))).toBe(false);
  } finally {
    world.setSubagentSettings({});
  }
}, 120_000);

test("sandbox + isolated worktree: the child commits and branches there; the shared hooks and config stay read-only", async () => {
  if (skip) return console.warn(skip);
  const marker = `w${Date.now()}`;
  const repo = makeRepo(world.root, join(world.root, `repo-${marker}`), false);
  const pwned = join(world.root, `pwned-${marker}`);
  const command = [
    `echo wt > wt.txt && git add wt.txt && git commit -q -m "wt ${marker}" && git branch child-${marker} && ${say(`branched-${marker}`)}`,
    `printf '#!/bin/sh\\ntouch ${pwned}\\n' > "$(git rev-parse --git-common-dir)/hooks/post-checkout" || ${say("NO-HOOK")}`,
    `git config core.fsmonitor 'touch ${pwned}' || ${say("NO-CONFIG")}`,
    `echo "gitdir: /nowhere" > .git || ${say("NO-DOTGIT")}`,
  ].join("; ");
  const r = await cli(
    world,
    ["run", "default", probe(marker, command), "--sandbox", "--isolation", "worktree", "--json"],
    { binary: true, cwd: repo },
  );
  const [t] = summaryOf(r.json);
  expect(t.status, r.stderr).toBe("completed");
  const seen = seenBy(marker);
  expect(seen, seen.slice(-2000)).toContain(`BRANCHED-${marker.toUpperCase()}`);
  expect(seen).toContain("NO-HOOK");
  expect(seen).toContain("NO-CONFIG");
  expect(seen).toContain("NO-DOTGIT");
  expect(gitIn(world.root, repo, "log", "--format=%s", `child-${marker}`)).toContain(`wt ${marker}`);
  gitIn(world.root, repo, "status");
  gitIn(world.root, repo, "checkout", "-q", `child-${marker}`);
  expect(existsSync(pwned)).toBe(false);
  expect((t.warnings ?? []).join("\n"), seen.slice(-1500)).toContain("hooks/post-checkout");
}, 120_000);

test("nested planting: a repository the child makes (core.fsmonitor, a hook) and adds as a gitlink, a deep one it changes and links, pi config and .envrc in a subfolder — the person's git status at the top runs nothing, each is made harmless and named", async () => {
  if (skip) return console.warn(skip);
  const marker = `n${Date.now()}`;
  const repo = makeRepo(world.root, join(world.root, `repo-${marker}`), false);
  const pwned = join(world.root, `pwned-${marker}`);
  mkdirSync(pwned);
  // Existing nested repositories: one two levels down (protected during the run), one six (beyond the walk).
  const near = join(repo, "lib", "dep");
  const deep = join(repo, "a", "b", "c", "d", "e", "deep");
  for (const r of [near, deep]) {
    mkdirSync(r, { recursive: true });
    gitIn(world.root, r, "init", "-q", "-b", "main");
    writeFileSync(join(r, "f"), "f\n");
    gitIn(world.root, r, "add", "f");
    gitIn(world.root, r, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "f");
  }
  const commit = `git -c user.email=c@d -c user.name=child commit -q`;
  const command = [
    // A new repository with a command in its config and a hook, committed into the person's repository as a gitlink.
    `git init -q planted && git -C planted config core.fsmonitor 'touch ${pwned}/fsmonitor; false'`,
    `printf '#!/bin/sh\\ntouch ${pwned}/hook\\n' > planted/.git/hooks/post-checkout && chmod +x planted/.git/hooks/post-checkout`,
    `echo x > planted/x && git -C planted add x && git -C planted ${commit.slice(4)} -m inner`,
    `git add planted && ${commit} -m "add planted" && ${say("GITLINKED")}`,
    // The existing nested repository two levels down: refused.
    `git -C lib/dep config core.fsmonitor 'touch ${pwned}/near' || ${say("NO-NEAR")}`,
    // The deep one is beyond the walk: its config is written, and it is linked so that git status enters it.
    `git -C a/b/c/d/e/deep config core.fsmonitor 'touch ${pwned}/deep' && git add a/b/c/d/e/deep && ${commit} -m deep && ${say("DEEP-LINKED")}`,
    // pi's project config and a direnv file in a subfolder.
    `mkdir -p pkg/.pi/extensions && echo 'export default function () {}' > pkg/.pi/extensions/x.ts && echo 'touch ${pwned}/envrc' > pkg/.envrc && ${say("PLANTED-CONFIG")}`,
  ].join("; ");
  const { t, seen } = await inSandbox(marker, command, repo);
  for (const said of ["GITLINKED", "NO-NEAR", "DEEP-LINKED", "PLANTED-CONFIG"])
    expect(seen, seen.slice(-2500)).toContain(said);
  // The person, outside, with full rights: git status at the top (it enters both submodules), and in each of them.
  const hooksOff = (r: string) => gitIn(world.root, r, "config", "--get-all", "core.fsmonitor").trim();
  gitIn(world.root, repo, "status");
  for (const r of [join(repo, "planted"), near, deep]) gitIn(world.root, r, "status");
  gitIn(world.root, join(repo, "planted"), "checkout", "-q", "-b", "other");
  expect(readdirSync(pwned)).toEqual([]);
  for (const r of [join(repo, "planted"), near, deep]) expect(() => hooksOff(r)).toThrow();
  expect(existsSync(join(repo, "planted", ".git", "hooks", "post-checkout"))).toBe(false);
  // The child's other work is kept: the planted repository's commit, the gitlinks.
  expect(gitIn(world.root, join(repo, "planted"), "log", "--format=%s")).toContain("inner");
  expect(gitIn(world.root, repo, "ls-files", "-s", "planted")).toMatch(/^160000 /);
  // pi config and .envrc in the subfolder: moved aside, not loaded.
  expect(existsSync(join(repo, "pkg", ".pi"))).toBe(false);
  expect(existsSync(join(repo, "pkg", ".pi.quarantined", "extensions", "x.ts"))).toBe(true);
  expect(existsSync(join(repo, "pkg", ".envrc.quarantined"))).toBe(true);
  const warned = (t.warnings ?? []).join("\n");
  expect(warned, warned).toContain("planted (core.fsmonitor, hooks/post-checkout)");
  expect(warned).toContain("the child added a/b/c/d/e/deep, planted to the repository as submodules");
  // git names the refused file relative to where it ran (lib/dep): ".git/config".
  expect(warned).toContain("refused the child's write to .git/config");
  expect(warned).toContain("pkg/.pi → pkg/.pi.quarantined");
  expect(warned).toContain("pkg/.envrc → pkg/.envrc.quarantined");
}, 120_000);
