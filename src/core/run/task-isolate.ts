// Stage "isolate": the folder the child works in — the task's cwd, or a git worktree of it made for this session.
import type { RunResult } from "../types.ts";
import { createIsolation } from "./launch/isolation.ts";
import { failedResult } from "./task-error.ts";
import type { TaskContext } from "./task-context.ts";

export async function isolateTask(task: TaskContext): Promise<RunResult | void> {
  if (!task.isolation) return;
  const iso = await createIsolation(task.engine.worktrees!, {
    cwd: task.input.cwd,
    id: task.id,
    name: task.input.name,
  });
  if ("error" in iso) return failedResult(iso.error, "ISOLATION_FAILED");
  task.iso = iso;
  task.cwd = iso.worktree.cwd;
}
