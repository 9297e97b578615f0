// Stage "skills": the skills a task's profile names, found once per engine and passed to the child.
import { discoverSkills, resolveProfileSkills } from "../profiles/skills.ts";
import type { RunResult } from "../types.ts";
import { failedResult } from "./task-error.ts";
import type { TaskContext } from "./task-context.ts";

export function loadSkills(task: TaskContext): RunResult | void {
  const { engine, profile, input } = task;
  if (!profile || !(profile.suggestedSkills?.length || profile.loadSkills?.length)) return;
  engine.caches.skills ??= discoverSkills(engine.host, { agentDir: engine.agentDir, cwd: input.cwd });
  const resolved = resolveProfileSkills(engine.host, profile, engine.caches.skills);
  // Unknown skills fail this task only; the others go on.
  if ("error" in resolved) return failedResult(resolved.error, "INVALID_INPUT");
  task.skills = resolved;
}
