// Shapes of worktree isolation that every layer shares (profiles read the mode, the store keeps the result);
// the lifecycle is core/run/launch/isolation.ts.

export const ISOLATION_MODES = ["worktree"] as const;
export type IsolationMode = (typeof ISOLATION_MODES)[number];
/** What a task field, tool parameter or agent file says about isolation, when it names a mode. */
export const isIsolationMode = (v: unknown): v is IsolationMode => (ISOLATION_MODES as readonly unknown[]).includes(v);

/** One changed file of an isolated task; null counts for binary files. */
export type ChangedFile = { path: string; added: number | null; deleted: number | null };

/** How a task's child sees its folder (core/run/launch/worktree-view.ts): a layer over it, a clone, a copy. */
export type ViewMechanism = "overlay" | "reflink" | "copy";

/** What a run's record keeps of its task's view: how, what a copy cost, which `.worktreeinclude` entries. */
export type ViewRecord = { mechanism: ViewMechanism | "none"; bytes?: number; included: string[] };

/** What an isolated task left behind: recorded with the run and shown in every result. */
export type IsolationResult = {
  /** The branch holding the task's changes; absent when it changed nothing (no branch is made). */
  branch?: string;
  /** The commit the worktree started from: HEAD, or a snapshot commit of the user's uncommitted state on top. */
  base: string;
  /** Top folder of the user's repository. */
  repo: string;
  files: ChangedFile[];
  /** git's one-line summary: "2 files changed, 3 insertions(+), 1 deletion(-)". */
  diffstat: string;
  /** Set when committing or removing the worktree went wrong (the worktree is then kept for prune). */
  error?: string;
  /** How the task saw the repository (its layer over your tree, or a copy). */
  view?: ViewRecord;
  /** The task's worktree while it exists and what it holds is not kept yet (recorded when it is made: the task runs,
   *  or its owner ended before finishing it — the next run or `prune` finishes it and records the rest). */
  worktree?: string;
  /** What the task changed that its branch does not hold (git data, links out of the folder, …), named. */
  left?: string[];
};
