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
  const gitDir = where.sandbox ? worktreeGitDir(req.host, req.cwd) : undefined;
  return where.runner.place({ ...req, sandbox: where.sandbox, gitDir });
}
