// Stage "accept": what is said about the run's result before it is recorded (today: the run's warnings; the
// finalize contract itself is enforced by the runner while the child runs).
import { ranResult, type TaskContext } from "./task-context.ts";

export function acceptResult(task: TaskContext): void {
  const result = ranResult(task);
  if (task.warnings.length) result.warnings = [...task.warnings, ...(result.warnings ?? [])];
}
