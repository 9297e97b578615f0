// Stage "isolate": the folder the child works in — the task's cwd, or a git worktree of it made for this session,
// with its view of the repository's ignored files (launch/worktree-view.ts): the folders it depends on, the files
// `.worktreeinclude` names, whose secrets are masked from here on in everything shown of this run.
import { maskLiterals, sanitize } from "../sanitize.ts";
import { secretValues } from "../secret-values.ts";
import type { RunResult } from "../types.ts";
import { createIsolation } from "./launch/isolation.ts";
import { viewWarning } from "./launch/worktree-view.ts";
import { failedResult } from "./task-error.ts";
import type { TaskContext } from "./task-context.ts";

/** Included files larger than this are no settings file: not read for secrets. */
const MAX_SECRET_FILE = 256 * 1024;

export async function isolateTask(task: TaskContext): Promise<RunResult | void> {
  if (!task.input.isolation) return;
  const { engine } = task;
  const iso = await createIsolation(engine.worktrees!, {
    cwd: task.input.cwd,
    id: task.id,
    name: task.input.name,
    runId: task.runId,
    // Only a child that is a process of this machine can be started inside an overlay's namespace.
    view: { deps: engine.settings.worktreeDeps, local: task.where.runner.local },
  });
  if ("error" in iso) return failedResult(iso.error, "ISOLATION_FAILED");
  task.iso = iso;
  task.cwd = iso.worktree.cwd;
  const view = iso.worktree.view;
  if (!view) return;
  for (const entry of view.included) {
    const file = `${iso.worktree.path}/${entry}`;
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
