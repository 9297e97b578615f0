// `subagents apply` guards itself: before git starts changing the user's tree it writes a marker in the repository's
// git folder (`subagents-apply.json`: who applies what, HEAD before, the files the apply writes) and removes it once
// git has ended — applied, or stopped by a conflict git itself explains. A marker whose process is gone means an
// apply was killed midway (a closed terminal, SIGKILL): git may have written some files and not others, or stopped
// between two cherry-picked commits. The next `apply` and `doctor` read it and say what state the tree is in and
// how to finish or undo it; `apply --abort` undoes it, and `apply` of the same session undoes a half-written tree
// itself before applying again.
import * as fs from "node:fs";
import * as path from "node:path";
import { git } from "../../host/git-command.ts";
import { processRuns, procStartTime, recordAlive } from "../../host/process-identity.ts";
import { writeFileAtomic } from "../../host/atomic-write.ts";

export type ApplyMarker = {
  pid: number;
  startTime: string | null;
  /** git's own process while it runs (and its start time): a `subagents apply` killed alone leaves git finishing
   *  on its own. */
  gitPid?: number;
  gitStart?: string | null;
  session: string;
  branch: string;
  mode: "merge" | "cherry-pick";
  /** HEAD before the apply ("" in a repository without a commit). */
  head: string;
  /** The files the apply writes (relative to the top): what an undo brings back to `head`. */
  files: string[];
  startedAt: number;
};

/** What a dead apply left: git still finishing it, git's own operation in progress, a half-written tree (HEAD not
 *  moved), or nothing to do (it completed, or HEAD moved on since). */
export type ApplyState =
  | { kind: "running"; pid: number }
  | { kind: "git-op"; op: "merge" | "cherry-pick"; lock: boolean }
  | { kind: "half"; lock: boolean }
  | { kind: "done" };

const MARKER = "subagents-apply.json";

export type RepoPlace = { top: string; gitDir: string; marker: string };

/** The repository holding cwd (its top and this worktree's git folder), or null. */
export async function repoPlace(cwd: string): Promise<RepoPlace | null> {
  const r = await git(["rev-parse", "--show-toplevel", "--absolute-git-dir"], cwd);
  if (r.code !== 0) return null;
  const [top, gitDir] = r.stdout.trim().split("\n");
  return top && gitDir ? { top, gitDir, marker: path.join(gitDir, MARKER) } : null;
}

export function readMarker(place: RepoPlace): ApplyMarker | null {
  try {
    return JSON.parse(fs.readFileSync(place.marker, "utf8")) as ApplyMarker;
  } catch {
    return null;
  }
}

export function writeMarker(place: RepoPlace, m: ApplyMarker): void {
  writeFileAtomic(place.marker, JSON.stringify(m));
}

export const removeMarker = (place: RepoPlace) => fs.rmSync(place.marker, { force: true });

export const newMarker = (m: Omit<ApplyMarker, "pid" | "startTime" | "startedAt">): ApplyMarker => ({
  ...m,
  pid: process.pid,
  startTime: procStartTime(process.pid),
  startedAt: Date.now(),
});

/** The git an apply started still runs (a zombie its dead parent left for init to reap does not). */
const gitRuns = (m: ApplyMarker) =>
  !!m.gitPid && processRuns(m.gitPid) && recordAlive({ pid: m.gitPid, startTime: m.gitStart ?? null });

const head = async (top: string) => (await git(["rev-parse", "--verify", "-q", "HEAD"], top)).stdout.trim();

export async function applyState(place: RepoPlace, m: ApplyMarker): Promise<ApplyState> {
  if (recordAlive({ pid: m.pid, startTime: m.startTime })) return { kind: "running", pid: m.pid };
  if (gitRuns(m)) return { kind: "running", pid: m.gitPid! };
  const lock = fs.existsSync(path.join(place.gitDir, "index.lock"));
  const has = (f: string) => fs.existsSync(path.join(place.gitDir, f));
  if (has("CHERRY_PICK_HEAD") || has("sequencer")) return { kind: "git-op", op: "cherry-pick", lock };
  if (has("MERGE_HEAD")) return { kind: "git-op", op: "merge", lock };
  if ((await head(place.top)) === m.head) return { kind: "half", lock };
  return { kind: "done" };
}

const what = (m: ApplyMarker) =>
  `\`subagents apply ${m.session}\` (${m.mode === "merge" ? "merging" : "cherry-picking"} ${m.branch}, pid ${m.pid}, ${new Date(m.startedAt).toISOString()})`;

/** What to tell the person about a dead apply: what happened, and the commands that finish or undo it. */
export function stateLines(place: RepoPlace, m: ApplyMarker, s: ApplyState): { said: string; fix: string } {
  const unlock = `rm ${path.join(place.gitDir, "index.lock")} && `;
  switch (s.kind) {
    case "running":
      return { said: `${what(m)} is still running (pid ${s.pid})`, fix: "wait for it to end" };
    case "git-op":
      return {
        said: `${what(m)} was stopped midway: git's ${s.op} is in progress${s.lock ? " and its index is still locked" : ""}`,
        fix:
          s.op === "merge"
            ? `finish: resolve what 'git status' lists, git add, git commit; undo: ${s.lock ? unlock : ""}git merge --abort (or subagents apply --abort)`
            : `finish: ${s.lock ? unlock : ""}git cherry-pick --continue; undo: git cherry-pick --abort (or subagents apply --abort)`,
      };
    case "half":
      return {
        said: `${what(m)} was stopped midway: HEAD has not moved, and up to ${m.files.length} file(s) it writes may be half-updated${s.lock ? " (git's index is still locked)" : ""}`,
        fix: `undo: subagents apply --abort (brings those files back as HEAD has them); finish: subagents apply ${m.session} (undoes it first, then applies again)`,
      };
    case "done":
      return { said: `${what(m)} was stopped after git had finished (HEAD moved)`, fix: "nothing to undo" };
  }
}

/** Brings the files the apply writes back to HEAD before it (in the index and the tree). Those files were clean
 *  before it started (git refuses to apply over uncommitted changes to them), so nothing of the user's is lost. */
async function restoreFiles(place: RepoPlace, m: ApplyMarker): Promise<string | null> {
  if (!m.files.length) return null;
  const inHead = new Set(
    m.head ? (await git(["ls-tree", "-r", "-z", "--name-only", m.head], place.top)).stdout.split("\0") : [],
  );
  const tracked = m.files.filter((f) => inHead.has(f));
  const known = new Set(tracked);
  if (tracked.length) {
    const r = await git(
      ["checkout", m.head, "--pathspec-from-file=-", "--pathspec-file-nul"],
      place.top,
      {},
      `${tracked.join("\0")}\0`,
    );
    if (r.code !== 0) return `git checkout failed: ${r.stderr.trim()}`;
  }
  // What the apply added (not in HEAD before) goes from the index and the tree.
  const added = m.files.filter((f) => !known.has(f));
  if (added.length) {
    const nul = `${added.join("\0")}\0`;
    await git(
      ["rm", "-q", "--cached", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"],
      place.top,
      {},
      nul,
    );
    for (const f of added) fs.rmSync(path.join(place.top, f), { force: true });
  }
  return null;
}

/** Undoes a dead apply as far as its state allows; the line saying what was done, or why not. */
export async function undoApply(place: RepoPlace, m: ApplyMarker): Promise<{ ok: boolean; said: string }> {
  const s = await applyState(place, m);
  if (s.kind === "running") return { ok: false, said: stateLines(place, m, s).said };
  if (s.kind !== "done" && s.lock) fs.rmSync(path.join(place.gitDir, "index.lock"), { force: true });
  if (s.kind === "git-op") {
    const r = await git([s.op, "--abort"], place.top);
    if (r.code !== 0) return { ok: false, said: `git ${s.op} --abort failed: ${r.stderr.trim()}` };
  } else if (s.kind === "half") {
    const failed = await restoreFiles(place, m);
    if (failed) return { ok: false, said: failed };
  }
  removeMarker(place);
  return {
    ok: true,
    said:
      s.kind === "done"
        ? `the stopped ${what(m)} had finished (HEAD moved); nothing undone`
        : `undid the stopped ${what(m)}: the tree is as before it`,
  };
}
