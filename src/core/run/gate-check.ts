// Checked before a call starts (both fronts): a gate runs in its task's folder, so that folder must exist —
// else the task would run to the end only to fail its check.
import { findProfile } from "../profiles/profile.ts";
import type { Engine, TaskInput } from "./task-shared.ts";

export function gateFolderProblem(engine: Pick<Engine, "host" | "profiles">, inputs: TaskInput[]): string | null {
  for (const t of inputs) {
    const profile = t.profile ? findProfile(engine.profiles, t.profile) : undefined;
    const gate = t.gate ?? profile?.gate;
    if (!gate?.trim()) continue;
    if (!engine.host.stat(t.cwd)?.isDirectory)
      return `task "${t.name}": its gate \`${gate}\` would run in ${t.cwd}, which is not a directory`;
  }
  return null;
}
