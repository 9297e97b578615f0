// After a sandboxed child ended: what it planted below the top of its folder, made harmless and named in the task's
// warnings (docs/sandbox-runners.md "Protected paths"). The walk of the folder is taken again (nested-scan.ts) and
// compared with the one taken before the run:
//  - a repository it made (a `.git` folder, a `.git` file and the folder it names, a bare repository): its config
//    keeps only keys that hold data (git-config-safe.ts), its hooks and the files that point git elsewhere go;
//  - a gitlink it added to the repository's index (`git status` enters the submodule): named, and the submodule's
//    git folder made harmless the same way unless it was protected during the run;
//  - pi's or another harness's project config, an editor's or direnv's file in a subfolder: moved aside
//    (`NAME.quarantined`), so nothing loads it until the person looks and moves it back.
// Existing ones could not be changed (they were read-only: sandbox-guard.ts), so only new ones are looked at.
import type { Host } from "../../host.ts";
import { listed } from "../../string-list.ts";
import { safeGitConfig } from "./git-config-safe.ts";
import { gitdirOf, resolveFrom, scanFolder } from "./nested-scan.ts";
import type { SandboxGuard } from "./sandbox-guard.ts";
import { under } from "./sandbox.ts";

type ReportHost = Pick<Host, "stat" | "listDir" | "readText" | "readBytes" | "writeFile" | "remove" | "rename">;

const MAX = 5;

/** What in a git folder the child made would run code, taken out; the names of what was taken. A `commondir` stays
 *  when it leads to a repository that was protected during the run (a linked worktree of the person's own). */
export function disarmGitDir(
  host: ReportHost,
  gd: string,
  trusted: (gitDir: string) => boolean = () => false,
): string[] {
  const removed: string[] = [];
  const config = host.readText(`${gd}/config`);
  if (config !== null) {
    const safe = safeGitConfig(config);
    if (safe.removed.length) {
      host.writeFile(`${gd}/config`, safe.text);
      removed.push(...safe.removed);
    }
  }
  for (const e of host.listDir(`${gd}/hooks`)) {
    if (e.name.endsWith(".sample") || e.isDirectory) continue;
    host.remove(`${gd}/hooks/${e.name}`);
    removed.push(`hooks/${e.name}`);
  }
  // Read with extensions.worktreeConfig, and pointing git at another folder's config and hooks.
  if (host.stat(`${gd}/config.worktree`)) {
    host.remove(`${gd}/config.worktree`);
    removed.push("config.worktree");
  }
  const common = host.readText(`${gd}/commondir`);
  if (common !== null && !trusted(resolveFrom(gd, common.trim()))) {
    host.remove(`${gd}/commondir`);
    removed.push("commondir");
  }
  return removed;
}

/** Moves a planted path aside (`NAME.quarantined`, then `-2`, `-3` …); the new name, or null when it could not. */
export function quarantine(host: ReportHost, p: string): string | null {
  for (let i = 1; i < 100; i++) {
    const to = `${p}.quarantined${i === 1 ? "" : `-${i}`}`;
    if (host.stat(to)) continue;
    return host.rename(p, to) ? to : null;
  }
  return null;
}

export function nestedWarnings(host: ReportHost, guard: SandboxGuard, opened: (p: string) => boolean): string[] {
  const out: string[] = [];
  const rel = (p: string) => {
    const r = guard.roots.find((root) => under(p, root));
    return r && p !== r ? p.slice(r.length + 1) : p;
  };
  const protectedConfig = new Set(guard.binds.filter((b) => b.how === "ro").map((b) => b.path));
  const trusted = (gd: string) => protectedConfig.has(`${gd}/config`);
  for (const { root, repo, scan: before } of guard.scans ?? []) {
    const after = scanFolder(host, root, repo);
    const inside = (p: string) => guard.roots.some((r) => under(p, r));
    // Repositories it made.
    const made = after.gitDirs.filter((gd) => !before.gitDirs.includes(gd) && inside(gd));
    const disarmed: string[] = [];
    const clean: string[] = [];
    for (const gd of made) {
      const removed = disarmGitDir(host, gd, trusted);
      const where = rel(gd.endsWith("/.git") ? gd.slice(0, -5) : gd);
      if (removed.length) disarmed.push(`${where} (${removed.join(", ")})`);
      else clean.push(where);
    }
    if (disarmed.length)
      out.push(
        `sandbox: the child made git repositories below its folder with code git would run; taken out: ${listed(disarmed, MAX)}`,
      );
    if (clean.length)
      out.push(`sandbox: the child made git repositories at ${listed(clean, MAX)} (nothing in them runs code)`);
    const elsewhere = after.gitFiles.filter(
      (f) => !before.gitFiles.some((b) => b.path === f.path && b.target === f.target) && !inside(f.target),
    );
    const pointed = elsewhere.map((f) => `${rel(f.path)} at ${f.target}`);
    if (pointed.length)
      out.push(`sandbox: the child pointed ${listed(pointed, MAX)}: git run there uses that repository`);
    // Gitlinks it added: git status enters them.
    if (before.gitlinks && after.gitlinks) {
      const added = after.gitlinks.filter((l) => !before.gitlinks!.includes(l));
      for (const l of added) {
        const gd = host.stat(`${l}/.git`)?.isDirectory ? `${l}/.git` : resolveGitFile(host, l);
        if (gd && !trusted(gd) && !made.includes(gd)) disarmGitDir(host, gd, trusted);
      }
      if (added.length)
        out.push(
          `sandbox: the child added ${listed(added.map(rel), MAX)} to the repository as submodules (gitlinks): \`git status\` enters them; their git config keeps only data`,
        );
    }
    // Project config in subfolders.
    const planted = after.names.filter((p) => !before.names.includes(p) && !opened(p));
    const moved = planted.map((p) => {
      const to = quarantine(host, p);
      return to ? `${rel(p)} → ${rel(to)}` : `${rel(p)} (could not be moved: check it)`;
    });
    if (moved.length)
      out.push(
        `sandbox: the child created project config that tools load when started there; moved aside: ${listed(moved, MAX)} (look at it before you move it back)`,
      );
  }
  return out;
}

function resolveGitFile(host: ReportHost, top: string): string | undefined {
  const target = gitdirOf(host, `${top}/.git`);
  return target ? resolveFrom(top, target) : undefined;
}
