// Settings of what an isolated task's worktree holds besides what git tracks (docs/composing.md "What an isolated
// task sees"): `subagents.worktreeDeps`, how the repository's ignored folders reach it, and `subagents.setup`, a
// command run in every new worktree before its child starts. A project's setup command is a command on the user's
// machine from whoever wrote the repository: it is marked as the project's, and runs only with the consent a
// project's hooks need (core/run/task-hooks.ts); a project may only shorten its bound.

/** `auto`: the cheapest way this machine offers (copy-on-write first); `copy`: always a real copy; `off`: none. */
export const WORKTREE_DEPS = ["auto", "copy", "off"] as const;
export type WorktreeDeps = (typeof WORKTREE_DEPS)[number];

export type SetupCommand = { command: string; source: "user" | "project"; file: string };

export type WorktreeSettings = {
  worktreeDeps: WorktreeDeps;
  /** The settings' setup command (the last file that names one), marked with where it came from. */
  setup?: SetupCommand;
  /** Seconds a setup command may run before it is ended and its task fails (SETUP_FAILED). */
  setupTimeout: number;
};

export const DEFAULT_SETUP_TIMEOUT = 300;
const MAX_SETUP_TIMEOUT = 86_400;

export const defaultWorktreeSettings = (): WorktreeSettings => ({
  worktreeDeps: "auto",
  setupTimeout: DEFAULT_SETUP_TIMEOUT,
});

/** Applies one raw `subagents` object's worktree keys over `out` (mutated). */
export function mergeWorktreeSettings(
  out: WorktreeSettings,
  r: Record<string, unknown>,
  where: string,
  userScope: boolean,
  warnings: string[],
): void {
  if (r.worktreeDeps !== undefined) {
    const v = r.worktreeDeps;
    if (typeof v === "string" && (WORKTREE_DEPS as readonly string[]).includes(v)) out.worktreeDeps = v as WorktreeDeps;
    else warnings.push(`${where}: subagents.worktreeDeps must be one of ${WORKTREE_DEPS.join(", ")}; ignored`);
  }
  if (r.setup !== undefined) {
    const v = r.setup;
    if (typeof v === "string" && v.trim())
      out.setup = { command: v, source: userScope ? "user" : "project", file: where };
    else if (v === null || v === "") out.setup = undefined;
    else warnings.push(`${where}: subagents.setup must be a shell command; ignored`);
  }
  if (r.setupTimeout !== undefined) {
    const v = r.setupTimeout;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0)
      warnings.push(`${where}: subagents.setupTimeout must be a positive number of seconds; ignored`);
    else if (!userScope && v > out.setupTimeout)
      warnings.push(
        `${where}: subagents.setupTimeout = ${v} would lengthen the setup's bound; a project's settings can only shorten it: ignored`,
      );
    else out.setupTimeout = Math.min(v, MAX_SETUP_TIMEOUT);
  }
}
