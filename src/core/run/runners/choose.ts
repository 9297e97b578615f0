// Which runner a task uses and whether it is sandboxed: the task's choice, else its agent file's, else the
// settings'. The sandbox only adds up: a setting of "on" cannot be turned off by a task or an agent file.
import type { Host } from "../../host.ts";
import { dockerRunner } from "./docker.ts";
import { localRunner } from "./local.ts";
import { gitdirOf } from "./nested-scan.ts";
import { slurmRunner } from "./slurm.ts";
import type { EngineSettings } from "../../runner-settings.ts";
import type { ChildRunner, Placed, PlaceRequest, RunnerName } from "./types.ts";

const RUNNERS: Record<RunnerName, ChildRunner> = { local: localRunner, docker: dockerRunner, slurm: slurmRunner };

export type Where = { runner: ChildRunner; sandbox: boolean; notes: string[] };

export function chooseWhere(
  settings: EngineSettings,
  task: { sandbox?: boolean; runner?: RunnerName },
  profile: { sandbox?: boolean; runner?: RunnerName } | null,
): Where {
  const runner = RUNNERS[task.runner ?? profile?.runner ?? settings.runner] ?? localRunner;
  const sandbox = settings.sandbox === "on" || !!task.sandbox || !!profile?.sandbox;
  return { runner, sandbox, notes: runner.notes ?? [] };
}

/** A child in the sandbox or a container: its folder is all it may write, its credentials a copy, its network the
 *  owner's proxy — and what it says does not reach a task that is not confined (core/team.ts). */
export const confined = (where: Pick<Where, "runner" | "sandbox">): boolean =>
  where.sandbox || where.runner.name === "docker";

/** Where a task runs: chooseWhere, with a resumed session's last placed run (runs where and how it did: a per-task
 *  --sandbox or runner is not lost, unless this task or its agent file says otherwise; the sandbox only adds up). */
export function taskWhere(
  settings: EngineSettings,
  task: { sandbox?: boolean; runner?: RunnerName },
  profile: { sandbox?: boolean; runner?: RunnerName } | null,
  priorRuns: readonly { runner?: RunnerName; sandbox?: boolean }[] = [],
): Where {
  // A run refused before it got that far recorded neither: the latest run that did is the one followed.
  const last = priorRuns.filter((r) => r.runner !== undefined).at(-1);
  return chooseWhere(
    settings,
    { sandbox: task.sandbox || last?.sandbox, runner: task.runner ?? profile?.runner ?? last?.runner },
    profile,
  );
}

/** The folder git keeps a linked worktree's index and HEAD in (`.git` is a file there), if cwd is in one. */
export function worktreeGitDir(host: Host, cwd: string): string | undefined {
  for (let dir = cwd, i = 0; dir && i < 32; dir = dir.slice(0, dir.lastIndexOf("/")), i++) {
    const st = host.stat(`${dir}/.git`);
    if (!st) continue;
    if (!st.isFile) return undefined;
    return gitdirOf(host, `${dir}/.git`);
  }
  return undefined;
}

/** The child's command where it runs, or why it cannot run there (nothing was started). */
export function wrapForRunner(where: Where, req: Omit<PlaceRequest, "sandbox" | "gitDir">): Promise<Placed | string> {
  const found = where.sandbox ? worktreeGitDir(req.host, req.cwd) : undefined;
  // Mounted writable and cleaned after the run by its real path, like the task folder (core/call/folders.ts).
  const gitDir = found && (req.host.realpath(found) ?? found);
  return where.runner.place({ ...req, sandbox: where.sandbox, gitDir });
}
