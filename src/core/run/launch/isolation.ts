// Worktree isolation (docs/composing.md "Isolation"): the shapes the engine and the fronts share, and the pure parts
// (branch names, overlap between tasks, result lines). The git work itself is a host part
// (src/host/git-worktree.ts) reached through `WorktreeHost`, so the engine stays free of runtime imports.

import type { IsolationResult } from "../../isolation-types.ts";
import type { Layer, NamespaceWay, ViewRequest, WorktreeView } from "./worktree-view.ts";
export type { ChangedFile, IsolationMode, IsolationResult } from "../../isolation-types.ts";

/** A live isolated task's tree, as the host made it; the engine reads `cwd`, and `view` for how its processes are
 *  started. */
export type Worktree = {
  id: string;
  /** The top folder the child sees: the repository's own (a layer over it) or the task's copy. */
  path: string;
  cwd: string;
  base: string;
  repo: string;
  name: string;
  /** The run this worktree is for: its record is told the isolation as it changes (made, finished). */
  runId?: number;
  /** How the task sees the repository (worktree-view.ts). */
  view?: WorktreeView;
  /** The host's own record of how it was made, so that another process can finish it (its owner died). */
  made?: WorktreeMade;
};

/** How a task's tree was made: its layer (and how it is entered) or its copy; the repository's git folder. */
export type WorktreeMade = {
  gitDir: string;
  layer?: Layer;
  way?: NamespaceWay;
  /** The task's own copy (removed when finished), and the repository's objects its git folder borrows. */
  copy?: string;
  objects?: string;
  /** A confined child (sandbox, container): the protected names stay behind (harvest-rules.ts). */
  confined?: boolean;
  /** What the person opened on purpose (subagents.sandboxWritable), relative to the top. */
  open?: string[];
  /** Folders git runs hooks from (core.hooksPath) inside the top, relative to it. */
  hooks?: string[];
  /** A confined task's layer over the user's own folder (not isolated): what comes back is written there, from the
   *  task's folder (`scope`, relative to the top) only. */
  inPlace?: { scope: string };
};

/** What a task asks of its tree. */
export type WorktreeRequest = {
  cwd: string;
  id: string;
  name: string;
  runId?: number;
  view?: ViewRequest;
  confined?: boolean;
  /** subagents.sandboxWritable, as absolute paths. */
  open?: string[];
};

/** Where a run's record learns its isolation as it changes (the store): from the moment its worktree exists, so an
 *  owner killed at any point leaves a record that names the worktree, then the branch it became. */
export type IsolationRecords = { setRunIsolation(runId: number, isolation: IsolationResult): void };

/** A worktree whose owner is gone, as the next clean-up finishes it: `keep` — its task's child had started, what it
 *  changed goes on a branch; `discard` — it was still being made or its setup command had not ended: nothing in it
 *  is the task's work, it is removed and nothing is kept. After the clean-up: the branch made, or why it failed. */
export type StaleWorktree = {
  id: string;
  path: string;
  repo: string;
  action: "keep" | "discard";
  branch?: string;
  error?: string;
};

export interface WorktreeHost {
  /** The repository top folder holding `cwd`, or null when `cwd` is in no git work tree. */
  locate(cwd: string): Promise<string | null>;
  /** A fresh worktree of cwd's repository at the user's current state (tree and index only read), with the view of
   *  its ignored files that `view` asks for. Throws. */
  create(opts: WorktreeRequest): Promise<Worktree>;
  /** A confined task's layer over its own folder (not isolated): `finish` writes back what comes back. Throws. */
  inPlace(opts: WorktreeRequest & { local: boolean }): Promise<Worktree>;
  /** A setup command is about to change the worktree: until `seal`, what it holds is nobody's work. */
  settingUp(wt: Worktree): void;
  /** Makes what the worktree holds now (a setup command's changes to tracked files) its base; the files committed. */
  seal(wt: Worktree): Promise<string[]>;
  /** Commits what the task changed on a branch of its own (if anything), then removes the worktree; one whose setup
   *  had not ended is removed with nothing kept. */
  finish(wt: Worktree): Promise<IsolationResult>;
  /** Finishes worktrees whose owner process is gone (SIGKILL) — what the task's child changed kept on a branch, a
   *  half-made one removed — and removes what such an owner left beside them. */
  cleanStale(): Promise<{ worktrees: StaleWorktree[]; leftovers: string[] }>;
  /** What cleanStale would do now, doing nothing (`prune --dry-run`). */
  staleWorktrees(): { worktrees: StaleWorktree[]; leftovers: string[] };
}

export const ISOLATION_NOT_A_REPO = (cwd: string) =>
  `Isolation "worktree" needs a git repository, but ${cwd} is not inside one (nothing was run)`;

/** "Fix the login bug!" → "fix-the-login-bug": the task's part of `subagents/<slug>-<id>`. */
export function branchSlug(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  return slug || "task";
}

export const branchName = (name: string, id: string, n = 1) =>
  `subagents/${branchSlug(name)}-${id.slice(0, 8)}${n > 1 ? `-${n}` : ""}`;

type Isolated = { name: string; result: { isolation?: IsolationResult } };

/** Files that more than one isolated task of a call changed, with the tasks that did. */
export function overlaps(outcomes: Isolated[]): { path: string; tasks: string[] }[] {
  const by = new Map<string, string[]>();
  for (const o of outcomes) {
    const iso = o.result.isolation;
    if (!iso?.branch) continue;
    for (const f of iso.files) {
      const key = `${iso.repo}\0${f.path}`;
      by.set(key, [...(by.get(key) ?? []), o.name]);
    }
  }
  return [...by.entries()].filter(([, t]) => t.length > 1).map(([k, tasks]) => ({ path: k.split("\0")[1], tasks }));
}

/** One line per isolated task ("branch …: 2 files changed …" or "no changes"), plus one per overlapping file. */
export function isolationLines(outcomes: (Isolated & { sessionId: string })[]): string[] {
  const lines: string[] = [];
  for (const o of outcomes) {
    const iso = o.result.isolation;
    if (!iso) continue;
    const what = iso.branch
      ? `branch ${iso.branch}: ${iso.diffstat} (${iso.files.map((f) => f.path).join(", ")}) — subagents apply ${o.sessionId}`
      : iso.worktree && !iso.error
        ? `worktree ${iso.worktree} not finished yet`
        : "no changes, no branch";
    lines.push(`${o.name}: ${what}${iso.error ? ` [${iso.error}]` : ""}`);
  }
  for (const o of overlaps(outcomes)) lines.push(`overlap: ${o.path} changed by ${o.tasks.join(", ")}`);
  return lines;
}

/** Variables that would point git (ours, or the child's) at another repository than the worktree. */
export const GIT_LOCATION_VARS = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_COMMON_DIR",
  "GIT_PREFIX",
  "GIT_OBJECT_DIRECTORY",
];

/** Why a task cannot be isolated (checked before anything is recorded or created), or null. */
export async function isolationProblem(worktrees: WorktreeHost | undefined, cwd: string): Promise<string | null> {
  if (!worktrees) return 'Isolation "worktree" is not available in this front (nothing was run)';
  try {
    return (await worktrees.locate(cwd)) ? null : ISOLATION_NOT_A_REPO(cwd);
  } catch (err) {
    return `Isolation "worktree" needs git: ${(err as Error).message} (nothing was run)`;
  }
}

export type LiveIsolation = {
  worktree: Worktree;
  /** Before a setup command runs: its changes are not the task's work until sealed. */
  settingUp(): void;
  /** After the setup command: its changes to tracked files become the base (the files), so the branch is the child's. */
  seal(): Promise<string[]>;
  finish(): Promise<IsolationResult>;
  scrubEnv(env: Record<string, string>): void;
};

/** Makes the task's worktree; every end of the run then goes through `finish`. */
export async function createIsolation(
  worktrees: WorktreeHost,
  opts: WorktreeRequest,
): Promise<LiveIsolation | { error: string }> {
  let worktree: Worktree;
  try {
    worktree = await worktrees.create(opts);
  } catch (err) {
    return { error: `Isolation failed (nothing was run): ${(err as Error).message}` };
  }
  return {
    worktree,
    settingUp: () => worktrees.settingUp(worktree),
    seal: () => worktrees.seal(worktree),
    // Never throws: the run's terminal status must be recorded whatever git or the file system did.
    finish: async () => {
      try {
        return await worktrees.finish(worktree);
      } catch (err) {
        return {
          base: worktree.base,
          repo: worktree.repo,
          files: [],
          diffstat: "",
          error: `worktree not finished (${worktree.path}): ${(err as Error).message}`,
        };
      }
    },
    scrubEnv: (env) => {
      for (const k of GIT_LOCATION_VARS) delete env[k];
    },
  };
}

/** Per-task isolation results and the overlap, for a call's details / JSON summary; null when none was isolated. */
export function isolationDetails(outcomes: (Isolated & { sessionId: string })[]) {
  const tasks = outcomes
    .filter((o) => o.result.isolation)
    .map((o) => ({ name: o.name, sessionId: o.sessionId, ...o.result.isolation! }));
  return tasks.length ? { tasks, overlaps: overlaps(outcomes) } : null;
}
