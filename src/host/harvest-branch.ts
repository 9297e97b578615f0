// An isolated task's branch, committed by its owner from what the task changed (harvest.ts) on the commit it started
// from — never from the child's own commits or refs, which stay in its layer with the rest of its git data. The
// content goes through git's own plumbing in a temporary index: the files the task wrote are read from where the
// harvest found them (`git update-index --add`, so the repository's attributes and filters apply as `git add` would
// apply them), what is gone is removed (`--force-remove`), ignored files never come (git's own rules in the task's
// view, harvest.ts), nor what `.worktreeinclude` names (secrets). Names cross as bytes (`-z`).
import * as fs from "node:fs";
import type { Harvest } from "./harvest.ts";
import { git, runBytes } from "./git-command.ts";

/** Plumbing in the user's repository never runs the user's fsmonitor against our folders. */
const QUIET = ["-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false"];

const nul = (list: Buffer[]) => Buffer.concat(list.flatMap((p) => [p, Buffer.from([0])]));
const split0 = (b: Buffer) => {
  const out: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < b.length; i++)
    if (b[i] === 0) {
      if (i > start) out.push(b.subarray(start, i));
      start = i + 1;
    }
  return out;
};

export type BranchCommit = {
  /** The user's repository (its top folder) and its git folder (where objects go). */
  repo: string;
  gitDir: string;
  /** The index of the commit the task started from (its stat data match the user's tree), never changed. */
  baseIndex: string;
  base: string;
  /** A scratch index file of the task's own. */
  index: string;
  message: string;
  who: Record<string, string>;
  /** The repository's `.worktreeinclude`, when it has one: what it names never lands on the branch. */
  include?: string;
};

/** What `.worktreeinclude` names among the files in `from` (the layer holds only what changed). */
async function includedOf(c: BranchCommit, from: string): Promise<Set<string>> {
  if (!c.include) return new Set();
  const empty = `${c.index}.empty`;
  fs.rmSync(empty, { force: true });
  const r = await runBytes(
    "git",
    [...QUIET, "ls-files", "-z", "--others", "--ignored", `--exclude-from=${c.include}`],
    {
      cwd: from,
      env: { GIT_DIR: c.gitDir, GIT_WORK_TREE: from, GIT_INDEX_FILE: empty },
    },
  );
  fs.rmSync(empty, { force: true });
  if (r.code !== 0) throw new Error(`git ls-files failed: ${r.stderr.toString().trim()}`);
  return new Set(split0(r.stdout).map((b) => b.toString("latin1")));
}

/**
 * Commits the harvest on `base`: the new commit, or null when the task's content equals it. `ignored` are the
 * changed paths git ignores in the task's view (harvest.ts).
 */
export async function commitHarvest(
  c: BranchCommit,
  h: Harvest,
  ignored: Set<string>,
): Promise<{ commit: string | null; tree: string; index: string }> {
  fs.copyFileSync(c.baseIndex, c.index);
  const env = { GIT_DIR: c.gitDir, GIT_INDEX_FILE: c.index, GIT_LITERAL_PATHSPECS: "1" };
  const run = async (args: string[], input?: Buffer, extra: Record<string, string> = {}) => {
    const r = await runBytes("git", [...QUIET, ...args], {
      cwd: extra.GIT_WORK_TREE ?? c.repo,
      env: { ...env, ...extra },
      input,
    });
    if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.toString().trim().slice(-400)}`);
    return r.stdout;
  };
  const key = (b: Buffer) => b.toString("latin1");
  const written = [...h.files, ...h.links.map((l) => l.path)];
  const listed = written.length ? await includedOf(c, h.from) : new Set<string>();
  const take = written.filter((p) => !ignored.has(key(p)) && !listed.has(key(p)));
  // What is gone: every tracked path at or under it, unless the task wrote it again.
  if (h.gone.length) {
    const again = new Set(written.map(key));
    const gone = h.gone.map((g) => key(g.path));
    const under = (p: string) => gone.some((g) => p === g || p.startsWith(`${g}/`));
    const tracked = split0(await run(["ls-files", "-z", "--cached"])).filter(
      (p) => !again.has(key(p)) && under(key(p)),
    );
    if (tracked.length) await run(["update-index", "-z", "--force-remove", "--stdin"], nul(tracked));
  }
  if (take.length)
    await run(["update-index", "-z", "--add", "--replace", "--stdin"], nul(take), { GIT_WORK_TREE: h.from });
  const tree = (await run(["write-tree"])).toString().trim();
  const baseTree = (
    await git([...QUIET, "rev-parse", `${c.base}^{tree}`], c.repo, { GIT_DIR: c.gitDir })
  ).stdout.trim();
  if (tree === baseTree) return { commit: null, tree, index: c.index };
  const commit = (await run(["commit-tree", tree, "-p", c.base, "-m", c.message], undefined, c.who)).toString().trim();
  return { commit, tree, index: c.index };
}
