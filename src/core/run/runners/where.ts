// Where a resolved task runs: its runner (the task's, its agent file's, a resumed run's or the settings' — decided
// by the call's resolution, looked up here by name) and whether in the sandbox; and the child's command there.
import { runnerNamed } from "./index.ts";
import type { ChildRunner, Placed, PlaceRequest, RunnerName } from "./types.ts";

export type Where = { runner: ChildRunner; sandbox: boolean; notes: string[] };

/** Where a task runs, as resolved: its runner looked up by name, and the sandbox. */
export function placeOf(task: { runner: RunnerName; sandbox: boolean }): Where {
  const runner = runnerNamed(task.runner);
  return { runner, sandbox: task.sandbox, notes: runner.notes ?? [] };
}

/** A child in the sandbox or a container: its folder is all it may write, its credentials a copy, its network the
 *  owner's proxy — and what it says does not reach a task that is not confined (core/team.ts). */
export const confined = (where: Pick<Where, "runner" | "sandbox">): boolean => where.sandbox || where.runner.confined;

/** A resolved task whose child is confined (the sandbox, a container). */
export const confinedTask = (task: { runner: RunnerName; sandbox: boolean }): boolean => confined(placeOf(task));

/** The child's command where it runs, or why it cannot run there (nothing was started). */
export function wrapForRunner(where: Where, req: Omit<PlaceRequest, "sandbox">): Promise<Placed | string> {
  return where.runner.place({ ...req, sandbox: where.sandbox });
}
