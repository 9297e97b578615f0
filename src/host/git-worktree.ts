// The git side of worktree isolation (core/run/launch/isolation.ts has the shapes). Worktrees live under the data
// dir (`<data dir>/worktrees/<session id>`), never inside the user's repository. Each has a small owner record
// next to it (`<id>.json`: pid + kernel start time, like control/registry.ts, and how far the worktree got), written
// before anything else of it exists, so a worktree whose owner was SIGKILLed at any moment is finished by the next
// run or `subagents prune`: what the task's child changed kept on a branch; a worktree still being made (a partial
// checkout) or whose setup command had not ended removed with nothing kept — its content is nobody's work.
// The user's tree and index are only read: the base snapshot is built in a temporary index (GIT_INDEX_FILE).
import * as fs from "node:fs";
import * as path from "node:path";
import {
  branchName,
  type ChangedFile,
  type IsolationRecords,
  type IsolationResult,
  type StaleWorktree,
  type Worktree,
  type WorktreeHost,
} from "../core/run/launch/isolation.ts";
import { pidAlive, procStartTime, recordAlive } from "./process-identity.ts";
import { writeFileAtomic } from "./atomic-write.ts";
import { endOrphans } from "./orphans.ts";
import { git, must, NO_HOOKS } from "./git-command.ts";
import { type ViewRequest, viewRecord } from "../core/run/launch/worktree-view.ts";
import { makeView } from "./worktree-view.ts";
import { PROBE_PREFIX, removeTree } from "./cow-probe.ts";

/** How far a worktree got: `making` (the base snapshot, `git worktree add`, its view), `setup` (a setup command
 *  changing it), `ready` (whole: from here on what changes in it is the task child's work). Records of an older
 *  version have none: taken as ready, as that version did. */
type Phase = "making" | "setup" | "ready";
type OwnerFile = Worktree & { pid: number; startTime: string | null; createdAt: number; phase?: Phase };
/** A dead owner's record as found: the file it is in (a clean-up killed after claiming it left it renamed). */
type Found = OwnerFile & { file: string };

/** A temporary index of a snapshot whose process left no record (an older version's): removed once this old. */
const ORPHAN_INDEX_MS = 10 * 60_000;

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

/** `records`: the store, told each run's isolation from the moment its worktree exists (create) to its end. */
export function createWorktreeHost(dataDir: string, records?: IsolationRecords): WorktreeHost {
  const root = path.join(dataDir, "worktrees");
  const recordFile = (id: string) => path.join(root, `${id}.json`);
  let staleChecked: Promise<unknown> | null = null;
  /** The phase of each worktree this process made (its record says the same). */
  const phases = new Map<string, Phase>();

  async function locate(cwd: string): Promise<string | null> {
    const r = await git(["rev-parse", "--show-toplevel"], cwd);
    if (r.code === 127) throw new Error(`git could not be run (${r.stderr.trim() || "not on PATH"})`);
    return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : null;
  }

  /** The user's current state as a commit: HEAD when the tree is clean, else a snapshot commit on top of it. */
  async function snapshot(repo: string, id: string, who: Record<string, string>): Promise<string> {
    const head = (await git(["rev-parse", "--verify", "-q", "HEAD"], repo)).stdout.trim();
    const realIndex = (await must(["rev-parse", "--path-format=absolute", "--git-path", "index"], repo)).trim();
    const tmpIndex = indexFile(id);
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
  const indexFile = (id: string) => path.join(root, `${id}.index`);
  /** Written whole or not at all (a kill mid-write leaves the previous record, never half of one). */
  const saveRecord = (wt: Worktree, phase: Phase) => {
    phases.set(wt.id, phase);
    writeFileAtomic(
      recordFile(wt.id),
      JSON.stringify({ ...wt, pid: process.pid, startTime: procStartTime(process.pid), createdAt: Date.now(), phase }),
      { mode: 0o600, dirMode: 0o700 },
    );
  };
  /** The run's record learns what became of its worktree. A store that cannot take it (a full disk) fails nothing
   *  here: the run's end, recorded after, says why it could not be written. */
  const tell = (wt: Worktree, iso: IsolationResult) => {
    if (!records || wt.runId === undefined) return;
    try {
      records.setRunIsolation(wt.runId, iso);
    } catch {
      // said by the run's end
    }
  };

  async function create(opts: {
    cwd: string;
    id: string;
    name: string;
    runId?: number;
    view?: ViewRequest;
  }): Promise<Worktree> {
    // A worktree a dead owner left behind (maybe this very session's) goes first.
    await (staleChecked ??= cleanStale());
    // This session's own worktree may have been left since (its owner killed after we looked): look again.
    if (fs.existsSync(recordFile(opts.id))) await cleanStale();
    const repo = await locate(opts.cwd);
    if (!repo) throw new Error(`${opts.cwd} is not inside a git repository`);
    const prefix = (await must(["rev-parse", "--show-prefix"], opts.cwd)).trim();
    const wtPath = path.join(root, opts.id);
    const wt: Worktree = {
      id: opts.id,
      path: wtPath,
      cwd: prefix ? path.join(wtPath, prefix).replace(/\/$/, "") : wtPath,
      base: "",
      repo,
      name: opts.name,
      ...(opts.runId !== undefined ? { runId: opts.runId } : {}),
    };
    // The record comes before anything of the worktree (the snapshot's index copy included), so nothing can exist
    // that a clean-up would not find; until it says `ready`, a clean-up removes what it finds and keeps nothing.
    saveRecord(wt, "making");
    try {
      wt.base = await snapshot(repo, opts.id, await identity(repo));
      saveRecord(wt, "making");
      // The run's record knows its isolation before the worktree exists: `apply`, `session` and prune can name it.
      tell(wt, { base: wt.base, repo, files: [], diffstat: "", worktree: wtPath });
      await oneAtATime(repo, () => addWorktree(wt));
      // The task's folder may hold only ignored or no files, so git did not make it.
      fs.mkdirSync(wt.cwd, { recursive: true });
      if (opts.view)
        wt.view = await makeView({ repo, wtPath, viewDir: viewDir(opts.id), dataRoot: root, request: opts.view });
      saveRecord(wt, "ready");
    } catch (err) {
      await discard(wt);
      throw err;
    }
    return wt;
  }

  /** A worktree that holds no work of the task (still being made, its setup unfinished): removed, nothing kept. */
  async function discard(wt: Worktree): Promise<IsolationResult> {
    await removeWorktree(wt);
    removeTree(viewDir(wt.id));
    fs.rmSync(indexFile(wt.id), { force: true });
    const result: IsolationResult = { base: wt.base, repo: wt.repo, files: [], diffstat: "" };
    if (wt.base) tell(wt, result);
    fs.rmSync(recordFile(wt.id), { force: true });
    phases.delete(wt.id);
    return result;
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
      // `git worktree add` locks its admin folder while it checks out ("initializing"): one cut short there is
      // never pruned by git, so ours goes by what it points at.
      await removeAdminFolder(wt);
      await git(["worktree", "prune"], wt.repo);
    }
  }

  /** The repository's admin folder (`.git/worktrees/<name>`) of our worktree path, if git left one. */
  async function removeAdminFolder(wt: Worktree): Promise<void> {
    const common = (await git(["rev-parse", "--path-format=absolute", "--git-common-dir"], wt.repo)).stdout.trim();
    if (!common) return;
    const admin = path.join(common, "worktrees");
    let names: string[];
    try {
      names = fs.readdirSync(admin);
    } catch {
      return;
    }
    for (const n of names) {
      let points: string;
      try {
        points = fs.readFileSync(path.join(admin, n, "gitdir"), "utf8").trim();
      } catch {
        continue;
      }
      if (points === path.join(wt.path, ".git")) fs.rmSync(path.join(admin, n), { recursive: true, force: true });
    }
  }

  /** A branch name not taken yet: `subagents/<slug>-<id>`, then `-2`, `-3`, … for later runs of a session — or the
   *  one of these that already holds `head` (a finish cut short after making it: the next one does not make two). */
  async function freeBranch(wt: Worktree, head: string): Promise<{ name: string; made: boolean }> {
    for (let n = 1; ; n++) {
      const name = branchName(wt.name, wt.id, n);
      const at = await git(["rev-parse", "--verify", "-q", `refs/heads/${name}`], wt.repo);
      if (at.code !== 0) return { name, made: false };
      if (at.stdout.trim() === head) return { name, made: true };
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
    const branch = await freeBranch(wt, head);
    out.branch = branch.name;
    if (!branch.made) await must(["branch", branch.name, head], wt.repo);
    return out;
  }

  function settingUp(wt: Worktree): void {
    saveRecord(wt, "setup");
  }

  /** A setup command's changes to what git tracks become part of the base: the branch holds the child's work only. */
  async function seal(wt: Worktree): Promise<string[]> {
    await must(["add", "-A"], wt.path);
    if ((await git(["diff", "--cached", "--quiet"], wt.path)).code !== 1) {
      saveRecord(wt, "ready");
      return [];
    }
    const files = (await must(["diff", "--cached", "--name-only", "-z", "--no-renames"], wt.path))
      .split("\0")
      .filter(Boolean);
    await must(
      [...NO_HOOKS, "commit", "-q", "--no-verify", "-m", "subagents: setup (base of an isolated task)"],
      wt.path,
      await identity(wt.path),
    );
    wt.base = (await must(["rev-parse", "HEAD"], wt.path)).trim();
    saveRecord(wt, "ready");
    tell(wt, { base: wt.base, repo: wt.repo, files: [], diffstat: "", worktree: wt.path });
    return files;
  }

  async function finish(wt: Worktree): Promise<IsolationResult> {
    const phase = phases.get(wt.id) ?? "ready";
    const result = phase === "ready" ? await keepAndRemove(wt) : await discard(wt);
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
        worktree: wt.path,
        error: `changes not saved, worktree kept at ${wt.path}: ${(err as Error).message}`,
      };
    }
    // The record learns the branch before the worktree goes: a kill from here on leaves no branch it does not name.
    tell(wt, result);
    await removeWorktree(wt);
    // What the task changed in its overlay layers goes with its worktree (a copy went with the worktree itself).
    removeTree(viewDir(wt.id));
    fs.rmSync(recordFile(wt.id), { force: true });
    phases.delete(wt.id);
    return result;
  }

  /** Remembered, so a worktree made in this process waits for the clean-up a front started earlier. */
  function cleanStale(): Promise<{ worktrees: StaleWorktree[]; leftovers: string[] }> {
    const next = cleanStaleNow();
    staleChecked = next;
    return next;
  }

  const readRecord = (file: string): OwnerFile | null => {
    try {
      return JSON.parse(fs.readFileSync(file, "utf8")) as OwnerFile;
    } catch {
      return null;
    }
  };

  const staleAction = (rec: Found): StaleWorktree => ({
    id: rec.id,
    path: rec.path,
    repo: rec.repo,
    action: (rec.phase ?? "ready") === "ready" ? "keep" : "discard",
  });

  /** What the clean-up would do now: the records of dead owners, and what such owners left without one. */
  function staleWorktrees(): { worktrees: StaleWorktree[]; leftovers: string[]; records: Found[] } {
    let names: string[];
    try {
      names = fs.readdirSync(root);
    } catch {
      return { worktrees: [], leftovers: [], records: [] };
    }
    const records: Found[] = [];
    const leftovers: string[] = [];
    const ids = new Set<string>();
    const found = (file: string) => {
      const rec = readRecord(file);
      if (!rec) return;
      ids.add(rec.id);
      if (!recordAlive(rec)) records.push({ ...rec, file });
    };
    for (const n of names) {
      const file = path.join(root, n);
      // A copy-on-write probe whose process died in the middle (cow-probe.ts).
      if (n.startsWith(PROBE_PREFIX)) {
        if (!pidAlive(Number(n.slice(PROBE_PREFIX.length).split("-")[0]))) leftovers.push(file);
        continue;
      }
      // A record half-written by a process that is gone (atomic-write.ts): the whole one is beside it.
      const tmp = /\.json\.(\d+)\.tmp$/.exec(n);
      if (tmp) {
        if (!pidAlive(Number(tmp[1]))) leftovers.push(file);
        continue;
      }
      // A record claimed by a clean-up that was killed before it wrote its own: the worktree is still to finish.
      const claim = /^(.+)\.cleaning-(\d+)$/.exec(n);
      if (claim) {
        if (pidAlive(Number(claim[2]))) continue;
        if (names.includes(`${claim[1]}.json`)) leftovers.push(file);
        else found(file);
        continue;
      }
      if (n.endsWith(".json")) found(file);
    }
    // A snapshot's index copy with no record: an older version's, killed while it made the snapshot.
    for (const n of names) {
      const index = /^(.+)\.index$/.exec(n);
      if (!index || ids.has(index[1])) continue;
      const st = fs.statSync(path.join(root, n), { throwIfNoEntry: false });
      if (st && Date.now() - st.mtimeMs > ORPHAN_INDEX_MS) leftovers.push(path.join(root, n));
    }
    return { worktrees: records.map(staleAction), leftovers, records };
  }

  async function cleanStaleNow(): Promise<{ worktrees: StaleWorktree[]; leftovers: string[] }> {
    const found = staleWorktrees();
    for (const f of found.leftovers) removeTree(f);
    const done: StaleWorktree[] = [];
    for (const rec of found.records) {
      // Claimed by renaming the record: of two processes cleaning at once, only one goes on.
      const claimed = path.join(root, `${rec.id}.cleaning-${process.pid}`);
      try {
        fs.renameSync(rec.file, claimed);
      } catch {
        continue;
      }
      const { file: _, ...own } = rec;
      const phase = rec.phase ?? "ready";
      saveRecord(own, phase);
      fs.rmSync(claimed, { force: true });
      // What the dead owner's setup, gate or child left running in it ends before the worktree goes from under it.
      await endOrphans(rec, rec.id, rec.path);
      const entry = staleAction(rec);
      if (phase !== "ready") {
        await discard(own);
        done.push(entry);
        continue;
      }
      // A git command of the dead owner cut short leaves the worktree's index lock behind: nobody holds it now.
      const gitDir = (await git(["rev-parse", "--absolute-git-dir"], rec.path)).stdout.trim();
      if (gitDir && fs.existsSync(rec.path)) fs.rmSync(path.join(gitDir, "index.lock"), { force: true });
      fs.rmSync(indexFile(rec.id), { force: true });
      let r: IsolationResult;
      try {
        r = await finish(own);
      } catch (err) {
        r = { base: rec.base, repo: rec.repo, files: [], diffstat: "", error: (err as Error).message };
      }
      done.push({ ...entry, ...(r.branch ? { branch: r.branch } : {}), ...(r.error ? { error: r.error } : {}) });
    }
    return { worktrees: done, leftovers: found.leftovers };
  }

  return {
    locate,
    create,
    settingUp,
    seal,
    finish,
    cleanStale,
    staleWorktrees: () => {
      const { worktrees, leftovers } = staleWorktrees();
      return { worktrees, leftovers };
    },
  };
}
