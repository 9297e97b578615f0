// The git side of worktree isolation (core/run/launch/isolation.ts has the shapes). Worktrees live under the data
// dir (`<data dir>/worktrees/<session id>`), never inside the user's repository. Each has a small owner record
// next to it (`<id>.json`: pid + kernel start time, like control/registry.ts) so a worktree whose owner was
// SIGKILLed is finished — changes kept on a branch — by the next run or `subagents prune`.
// The user's tree and index are only read: the base snapshot is built in a temporary index (GIT_INDEX_FILE).
import * as fs from "node:fs";
import * as path from "node:path";
import {
  branchName,
  type ChangedFile,
  type IsolationResult,
  type Worktree,
  type WorktreeHost,
} from "../core/run/launch/isolation.ts";
import { pidAlive, procStartTime, recordAlive } from "./process-identity.ts";
import { git, must, NO_HOOKS } from "./git-command.ts";
import { type ViewRequest, viewRecord } from "../core/run/launch/worktree-view.ts";
import { makeView } from "./worktree-view.ts";
import { PROBE_PREFIX, removeTree } from "./cow-probe.ts";

type OwnerFile = Worktree & { pid: number; startTime: string | null; createdAt: number };

/** When the user has no git identity (a fresh machine, a CI box), commits are made as "subagents". */
const FALLBACK_IDENTITY = {
  GIT_AUTHOR_NAME: "subagents",
  GIT_AUTHOR_EMAIL: "subagents@localhost",
  GIT_COMMITTER_NAME: "subagents",
  GIT_COMMITTER_EMAIL: "subagents@localhost",
};
/** While git makes a worktree it reads every other one's admin folder, and a sibling's half-made one fails it
 *  ("fatal: failed to read .git/worktrees/<id>/commondir"). */
const SIBLING_HALF_MADE = /failed to read \S*worktrees\/[^/\s]+\/(commondir|gitdir)/;

/** One worktree made or removed at a time per repository in this process (a call's isolated tasks start at once);
 *  a race with another process is retried (create). */
const worktreeQueues = new Map<string, Promise<unknown>>();
function oneAtATime<T>(repo: string, fn: () => Promise<T>): Promise<T> {
  const next = (worktreeQueues.get(repo) ?? Promise.resolve()).then(fn, fn);
  const settled = next.then(
    () => {},
    () => {},
  );
  worktreeQueues.set(repo, settled);
  void settled.then(() => {
    if (worktreeQueues.get(repo) === settled) worktreeQueues.delete(repo);
  });
  return next;
}

/** The identity env to commit with: none when the repository has one configured. */
async function identity(cwd: string): Promise<Record<string, string>> {
  return (await git(["var", "GIT_COMMITTER_IDENT"], cwd)).code === 0 &&
    (await git(["var", "GIT_AUTHOR_IDENT"], cwd)).code === 0
    ? {}
    : FALLBACK_IDENTITY;
}

/** `git diff --numstat -z` → changed files (binary files count null). */
function parseNumstat(out: string): ChangedFile[] {
  const files: ChangedFile[] = [];
  for (const rec of out.split("\0")) {
    const m = /^(\d+|-)\t(\d+|-)\t(.+)$/s.exec(rec.replace(/^\n/, ""));
    if (m)
      files.push({
        path: m[3],
        added: m[1] === "-" ? null : Number(m[1]),
        deleted: m[2] === "-" ? null : Number(m[2]),
      });
  }
  return files;
}

export function createWorktreeHost(dataDir: string): WorktreeHost {
  const root = path.join(dataDir, "worktrees");
  const recordFile = (id: string) => path.join(root, `${id}.json`);
  let staleChecked: Promise<number> | null = null;

  async function locate(cwd: string): Promise<string | null> {
    const r = await git(["rev-parse", "--show-toplevel"], cwd);
    if (r.code === 127) throw new Error(`git could not be run (${r.stderr.trim() || "not on PATH"})`);
    return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : null;
  }

  /** The user's current state as a commit: HEAD when the tree is clean, else a snapshot commit on top of it. */
  async function snapshot(repo: string, id: string, who: Record<string, string>): Promise<string> {
    const head = (await git(["rev-parse", "--verify", "-q", "HEAD"], repo)).stdout.trim();
    const realIndex = (await must(["rev-parse", "--path-format=absolute", "--git-path", "index"], repo)).trim();
    const tmpIndex = path.join(root, `${id}.index`);
    // A copy of the real index keeps its stat data, so `add -A` hashes only what changed; the original is untouched.
    if (fs.existsSync(realIndex)) fs.copyFileSync(realIndex, tmpIndex);
    else fs.rmSync(tmpIndex, { force: true });
    try {
      const env = { GIT_INDEX_FILE: tmpIndex };
      await must(["add", "-A"], repo, env);
      const tree = (await must(["write-tree"], repo, env)).trim();
      if (head && (await must(["rev-parse", `${head}^{tree}`], repo)).trim() === tree) return head;
      const parent = head ? ["-p", head] : [];
      return (
        await must(
          [
            "commit-tree",
            tree,
            ...parent,
            "-m",
            "subagents: snapshot of uncommitted changes (base of an isolated task)",
          ],
          repo,
          who,
        )
      ).trim();
    } finally {
      fs.rmSync(tmpIndex, { force: true });
    }
  }

  /** Where a task's view keeps its own layers (overlay), next to its worktree. */
  const viewDir = (id: string) => path.join(root, `${id}.view`);
  const saveRecord = (wt: Worktree) =>
    fs.writeFileSync(
      recordFile(wt.id),
      JSON.stringify({ ...wt, pid: process.pid, startTime: procStartTime(process.pid), createdAt: Date.now() }),
      { mode: 0o600 },
    );

  async function create(opts: { cwd: string; id: string; name: string; view?: ViewRequest }): Promise<Worktree> {
    // A worktree a dead owner left behind (maybe this very session's) goes first.
    await (staleChecked ??= cleanStale());
    // This session's own worktree may have been left since (its owner killed after we looked): look again.
    if (fs.existsSync(recordFile(opts.id))) await cleanStale();
    const repo = await locate(opts.cwd);
    if (!repo) throw new Error(`${opts.cwd} is not inside a git repository`);
    const prefix = (await must(["rev-parse", "--show-prefix"], opts.cwd)).trim();
    fs.mkdirSync(root, { recursive: true, mode: 0o700 });
    const who = await identity(repo);
    const base = await snapshot(repo, opts.id, who);
    const wtPath = path.join(root, opts.id);
    const wt: Worktree = {
      id: opts.id,
      path: wtPath,
      cwd: prefix ? path.join(wtPath, prefix).replace(/\/$/, "") : wtPath,
      base,
      repo,
      name: opts.name,
    };
    // The record comes before the worktree, so no worktree can exist that cleanup would not find.
    saveRecord(wt);
    try {
      await oneAtATime(repo, () => addWorktree(wt));
      // The task's folder may hold only ignored or no files, so git did not make it.
      fs.mkdirSync(wt.cwd, { recursive: true });
      if (opts.view) {
        wt.view = await makeView({ repo, wtPath, viewDir: viewDir(opts.id), dataRoot: root, request: opts.view });
        saveRecord(wt);
      }
    } catch (err) {
      await removeWorktree(wt);
      removeTree(viewDir(opts.id));
      fs.rmSync(recordFile(opts.id), { force: true });
      throw err;
    }
    return wt;
  }

  /** `git worktree add`, again (after clearing what the failed attempt left) when another process's half-made
   *  worktree got in the way. */
  async function addWorktree(wt: Worktree): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await must([...NO_HOOKS, "worktree", "add", "--detach", wt.path, wt.base], wt.repo);
        return;
      } catch (err) {
        if (attempt >= 4 || !SIBLING_HALF_MADE.test((err as Error).message)) throw err;
        await removeWorktreeNow(wt);
        await new Promise((done) => setTimeout(done, 50 * 2 ** attempt));
      }
    }
  }

  const removeWorktree = (wt: Worktree) => oneAtATime(wt.repo, () => removeWorktreeNow(wt));

  async function removeWorktreeNow(wt: Worktree): Promise<void> {
    const r = await git(["worktree", "remove", "--force", "--force", wt.path], wt.repo);
    if (r.code !== 0 || fs.existsSync(wt.path)) {
      fs.rmSync(wt.path, { recursive: true, force: true });
      await git(["worktree", "prune"], wt.repo);
    }
  }

  /** A branch name not taken yet: `subagents/<slug>-<id>`, then `-2`, `-3`, … for later runs of a session. */
  async function freeBranch(wt: Worktree): Promise<string> {
    for (let n = 1; ; n++) {
      const name = branchName(wt.name, wt.id, n);
      if ((await git(["rev-parse", "--verify", "-q", `refs/heads/${name}`], wt.repo)).code !== 0) return name;
    }
  }

  /** Commits everything the child changed (it may have committed some itself) and names the result. */
  async function keepChanges(wt: Worktree): Promise<IsolationResult> {
    const out: IsolationResult = { base: wt.base, repo: wt.repo, files: [], diffstat: "" };
    if (!fs.existsSync(wt.path)) return out;
    await must(["add", "-A"], wt.path);
    if ((await git(["diff", "--cached", "--quiet"], wt.path)).code === 1) {
      await must(
        [...NO_HOOKS, "commit", "-q", "--no-verify", "-m", `subagents: ${wt.name}`],
        wt.path,
        await identity(wt.path),
      );
    }
    const head = (await must(["rev-parse", "HEAD"], wt.path)).trim();
    if (head === wt.base) return out;
    out.files = parseNumstat(await must(["diff", "--numstat", "-z", "--no-renames", wt.base, head], wt.path));
    // The child may have committed and then reverted: commits, but no difference. Nothing to keep then.
    if (!out.files.length) return out;
    out.diffstat = (await must(["diff", "--shortstat", wt.base, head], wt.path)).trim();
    out.branch = await freeBranch(wt);
    await must(["branch", out.branch, head], wt.repo);
    return out;
  }

  /** A setup command's changes to what git tracks become part of the base: the branch holds the child's work only. */
  async function seal(wt: Worktree): Promise<string[]> {
    await must(["add", "-A"], wt.path);
    if ((await git(["diff", "--cached", "--quiet"], wt.path)).code !== 1) return [];
    const files = (await must(["diff", "--cached", "--name-only", "-z", "--no-renames"], wt.path))
      .split("\0")
      .filter(Boolean);
    await must(
      [...NO_HOOKS, "commit", "-q", "--no-verify", "-m", "subagents: setup (base of an isolated task)"],
      wt.path,
      await identity(wt.path),
    );
    wt.base = (await must(["rev-parse", "HEAD"], wt.path)).trim();
    saveRecord(wt);
    return files;
  }

  async function finish(wt: Worktree): Promise<IsolationResult> {
    const result = await keepAndRemove(wt);
    if (wt.view) result.view = viewRecord(wt.view);
    return result;
  }

  async function keepAndRemove(wt: Worktree): Promise<IsolationResult> {
    let result: IsolationResult;
    try {
      result = await keepChanges(wt);
    } catch (err) {
      // The worktree stays (with its record) so nothing is lost; prune or the next run tries again.
      return {
        base: wt.base,
        repo: wt.repo,
        files: [],
        diffstat: "",
        error: `changes not saved, worktree kept at ${wt.path}: ${(err as Error).message}`,
      };
    }
    await removeWorktree(wt);
    // What the task changed in its overlay layers goes with its worktree (a copy went with the worktree itself).
    removeTree(viewDir(wt.id));
    fs.rmSync(recordFile(wt.id), { force: true });
    return result;
  }

  /** Remembered, so a worktree made in this process waits for the clean-up a front started earlier. */
  function cleanStale(): Promise<number> {
    return (staleChecked = cleanStaleNow());
  }

  async function cleanStaleNow(): Promise<number> {
    let names: string[];
    try {
      names = fs.readdirSync(root);
    } catch {
      return 0;
    }
    // A copy-on-write probe whose process died in the middle (cow-probe.ts).
    for (const n of names)
      if (n.startsWith(PROBE_PREFIX) && !pidAlive(Number(n.slice(PROBE_PREFIX.length).split("-")[0])))
        removeTree(path.join(root, n));
    names = names.filter((n) => n.endsWith(".json"));
    let cleaned = 0;
    for (const n of names) {
      let rec: OwnerFile;
      try {
        rec = JSON.parse(fs.readFileSync(path.join(root, n), "utf8")) as OwnerFile;
      } catch {
        continue;
      }
      if (recordAlive(rec)) continue;
      // Claimed by renaming the record: of two processes cleaning at once, only one goes on.
      const claimed = path.join(root, `${rec.id}.cleaning-${process.pid}`);
      try {
        fs.renameSync(path.join(root, n), claimed);
      } catch {
        continue;
      }
      fs.writeFileSync(
        recordFile(rec.id),
        JSON.stringify({ ...rec, pid: process.pid, startTime: procStartTime(process.pid) }),
        { mode: 0o600 },
      );
      fs.rmSync(claimed, { force: true });
      // A git command of the dead owner cut short leaves the worktree's index lock behind: nobody holds it now.
      const gitDir = (await git(["rev-parse", "--absolute-git-dir"], rec.path)).stdout.trim();
      if (gitDir && fs.existsSync(rec.path)) fs.rmSync(path.join(gitDir, "index.lock"), { force: true });
      const r = await finish(rec);
      if (!r.error) cleaned++;
    }
    return cleaned;
  }

  return { locate, create, seal, finish, cleanStale };
}
