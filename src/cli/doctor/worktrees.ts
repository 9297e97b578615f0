// `doctor`'s line for how isolated (and sandboxed) tasks see a repository (core/run/launch/worktree-view.ts): a
// layer over it at its own path (an overlay in a namespace), copy-on-write clones, or a copy — and, in a repository,
// which of its files git ignores (what a task sees there that is on no branch). Finding out means trying: an overlay
// mount and a clone in a temporary folder under the data folder, removed at once (the only files doctor writes).
import * as fs from "node:fs";
import * as path from "node:path";
import { listed } from "../../core/string-list.ts";
import { overlayWay, reflinkWorks } from "../../host/cow-probe.ts";
import { git } from "../../host/git-command.ts";
import { ignoredEntries } from "../../host/worktree-view.ts";
import { dataDir, dbPath, type CliContext } from "../engine.ts";
import type { Check } from "./checks.ts";

const FIX =
  'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; Ubuntu ≥ 24.04: kernel.apparmor_restrict_unprivileged_userns=0), or keep your repositories and pi\'s agent folder on one btrfs or xfs filesystem; or set subagents.worktreeDeps to "off" (a copy of what git tracks) and name what tasks need in .worktreeinclude and subagents.setup';

/** The repository holding cwd and a file of its own git folder (what a clone is tried with), or null. */
async function repoOf(cwd: string): Promise<{ top: string; sample: string } | null> {
  const r = await git(["rev-parse", "--show-toplevel", "--path-format=absolute", "--git-common-dir"], cwd);
  if (r.code !== 0) return null;
  const [top, common] = r.stdout.trim().split("\n");
  return top && common ? { top, sample: path.join(common, "HEAD") } : null;
}

export async function worktreesCheck(ctx: CliContext, cwd: string): Promise<Check> {
  const name = "worktrees";
  const mode = ctx.settings.worktreeDeps;
  if (mode === "off")
    return {
      name,
      status: "ok",
      detail:
        "isolated tasks get a copy of what git tracks and what .worktreeinclude names (subagents.worktreeDeps is off): ignored files (node_modules, .venv, build info) only when .worktreeinclude names them",
    };
  const root = path.join(dataDir(ctx), "worktrees");
  const repo = await repoOf(cwd);
  const ignored = repo ? await ignoredEntries(repo.top).catch(() => []) : [];
  const here = repo
    ? `; in this repository, ignored (seen by tasks, on no branch): ${ignored.length ? listed(ignored, 6) : "nothing"}`
    : "";
  if (mode === "copy")
    return {
      name,
      status: "ok",
      detail: `isolated tasks get a copy of the repository, ignored files included (subagents.worktreeDeps is copy)${here}`,
    };
  const way = await overlayWay(root, true);
  const sample = repo?.sample ?? dbPath(ctx);
  const clones = fs.existsSync(sample) ? await reflinkWorks(sample, root) : "nothing to try a clone with";
  const others = clones === true ? "copy-on-write clones" : "a copy";
  if (typeof way === "object")
    return {
      name,
      status: "ok",
      detail: `isolated and sandboxed tasks see the repository through a layer at its own path (an overlay in a ${way.userns ? "user" : "mount"} namespace): every file as in your tree, ignored ones too (node_modules, .venv, .env, *.tsbuildinfo, .pnp.cjs), nothing copied, their writes kept in the task (docker and slurm runners: ${others})${here}`,
    };
  if (clones === true)
    return {
      name,
      status: "ok",
      detail: `isolated tasks get copy-on-write clones of the repository, ignored files included (${way})${here}`,
    };
  return {
    name,
    status: "warn",
    detail: `no copy-on-write here: each isolated task gets a copy of the repository, ignored files included (node_modules, .venv, …): its size in disk and time (${way}; ${clones})${here}`,
    fix: FIX,
  };
}
