// Stage "isolate": the folder the child works in — the task's cwd, or a git worktree of it made for this session,
// with its view of the repository's ignored files (launch/worktree-view.ts): the folders it depends on, the files
// `.worktreeinclude` names, whose secrets are masked from here on in everything shown of this run.
import { maskLiterals, sanitize } from "../sanitize.ts";
import { secretValues } from "../secret-values.ts";
import type { RunResult } from "../types.ts";
import { createIsolation, type Worktree } from "./launch/isolation.ts";
import { viewWarning } from "./launch/worktree-view.ts";
import { failedResult } from "./task-error.ts";
import { confined } from "./runners/where.ts";
import type { TaskContext } from "./task-context.ts";

/**
 * A confined task (the sandbox, a container) that is not isolated never writes the user's folder: it gets a layer
 * over it (a copy where its child cannot enter our namespace), and its owner writes back what comes back when it
 * ends (task-record.ts).
 */
async function confineTask(task: TaskContext): Promise<RunResult | void> {
  const { engine } = task;
  if (!confined(task.where) || !engine.worktrees) return;
  let worktree: Worktree;
  try {
    worktree = await engine.worktrees.inPlace({
      cwd: task.cwd,
      id: task.id,
      name: task.input.name,
      runId: task.runId,
      local: task.where.runner.local,
      open: opened(engine.settings.sandboxWritable, task.cwd, engine.host.homedir()),
    });
  } catch (err) {
    return failedResult(
      `The task's folder could not be given a layer of its own (nothing was run): ${(err as Error).message}`,
      "RUNNER_FAILED",
    );
  }
  const worktrees = engine.worktrees;
  task.inPlace = {
    worktree,
    finish: () =>
      worktrees
        .finish(worktree)
        .catch((err: Error) => ({ base: "", repo: worktree.repo, files: [], diffstat: "", error: err.message })),
  };
  const said = worktree.view && viewWarning(worktree.view, "its folder");
  const warning = said && sanitize(said);
  if (warning && !task.warnings.includes(warning)) task.warnings.push(warning);
}

/** subagents.sandboxWritable as absolute paths (written relative to the task folder, absolute, or `~/`). */
export const opened = (paths: string[], cwd: string, home: string) =>
  paths.map((p) => (p.startsWith("~/") ? `${home}${p.slice(1)}` : p.startsWith("/") ? p : `${cwd}/${p}`));

/** Included files larger than this are no settings file: not read for secrets. */
const MAX_SECRET_FILE = 256 * 1024;

export async function isolateTask(task: TaskContext): Promise<RunResult | void> {
  if (!task.input.isolation) return confineTask(task);
  const { engine } = task;
  const iso = await createIsolation(engine.worktrees!, {
    cwd: task.input.cwd,
    id: task.id,
    name: task.input.name,
    runId: task.runId,
    // Only a child that is a process of this machine can be started inside an overlay's namespace.
    view: { deps: engine.settings.worktreeDeps, local: task.where.runner.local },
    // A confined child's protected names stay behind when its branch is made (launch/harvest-rules.ts).
    confined: confined(task.where),
    open: opened(engine.settings.sandboxWritable, task.input.cwd, engine.host.homedir()),
  });
  if ("error" in iso) return failedResult(iso.error, "ISOLATION_FAILED");
  task.iso = iso;
  task.cwd = iso.worktree.cwd;
  const view = iso.worktree.view;
  if (!view) return;
  for (const entry of view.included) {
    const file = `${iso.worktree.repo}/${entry}`;
    const st = engine.host.stat(file);
    if (!st?.isFile || st.size > MAX_SECRET_FILE) continue;
    const values = secretValues(engine.host.readText(file) ?? "");
    maskLiterals(values);
    task.secrets = [...(task.secrets ?? []), ...values];
  }
  const said = viewWarning(view);
  const warning = said && sanitize(said);
  if (warning && !task.warnings.includes(warning)) task.warnings.push(warning);
}
