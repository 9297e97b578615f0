// Protected paths inside the sandbox's writable folder (issue 40), with the real bubblewrap and the real pi as
// child: a child tries to plant code that the person's own git and pi would run later (a hook, core.fsmonitor, a
// project pi extension, a replaced .git); the writes fail inside, the person's next git commands — run here,
// outside the sandbox — run nothing of the child's, and the task's warnings name each attempt. Ordinary work
// (edit, add, commit, a branch in an isolated worktree) still works.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
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
  const r = await cli(world, ["run", "default", probe(marker, command), "--sandbox", "--json"], {
    binary: true,
    cwd: repo,
  });
  const [t] = summaryOf(r.json);
  expect(t.status, r.stderr).toBe("completed");
  const seen = seenBy(marker);
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
