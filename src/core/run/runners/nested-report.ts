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
import type { FolderFs, Host, NodeInfo } from "../../host.ts";
import { listed } from "../../string-list.ts";
import { safeGitConfig } from "./git-config-safe.ts";
import { gitdirOf, resolveFrom, scanFolder } from "./nested-scan.ts";
import type { SandboxGuard } from "./sandbox-guard.ts";
import { under } from "./sandbox.ts";

type ReportHost = Pick<Host, "stat" | "listDir" | "readText" | "readBytes" | "within">;

const MAX = 5;

/** The no-follow file work of the writable folder holding `p` (the child wrote there: nothing in it is followed),
 *  or null when `p` lies in none of them (then the owner does not touch it). */
export function folderFs(host: Pick<Host, "within">, writable: string[], p: string): FolderFs | null {
  const root = writable.find((r) => under(p, r) && p !== r);
  return root ? host.within(root) : null;
}

/** How a path that is not what git expects there is named in a warning. */
const KIND: Record<NodeInfo["kind"], string> = {
  file: "a file",
  dir: "a folder",
  link: "a link",
  other: "a special file",
};

/** What in a git folder the child made would run code, taken out; the names of what was taken. A `commondir` stays
 *  when it leads to a repository that was protected during the run (a linked worktree of the person's own). Every
 *  step is taken without following a link the child made (`hooks` or `config` pointing at a file of the person's is
 *  removed as the link it is, never followed). */
export function disarmGitDir(fs: FolderFs, gd: string, trusted: (gitDir: string) => boolean = () => false): string[] {
  // Not a folder of ours reached without a link: nothing in it is touched, and the person is told to look.
  if (fs.info(gd)?.kind !== "dir") return ["not a plain folder of yours: left as it is, check it"];
  const removed: string[] = [];
  const config = fs.info(`${gd}/config`);
  if (config?.kind === "file") {
    const text = fs.readText(`${gd}/config`);
    const safe = text === null ? null : safeGitConfig(text);
    if (safe && !safe.removed.length) {
      // only data in it
    } else if (safe && fs.writeText(`${gd}/config`, safe.text)) removed.push(...safe.removed);
    // Unreadable or not rewritable as a plain file of ours (a hard link, another user's): the name goes, whole.
    else if (fs.remove(`${gd}/config`)) removed.push("config");
  } else if (config && fs.remove(`${gd}/config`)) removed.push(`config (${KIND[config.kind]})`);
  const hooks = fs.info(`${gd}/hooks`);
  if (hooks && hooks.kind !== "dir") {
    if (fs.remove(`${gd}/hooks`)) removed.push(`hooks (${KIND[hooks.kind]})`);
  } else
    for (const e of fs.list(`${gd}/hooks`)) {
      // git runs a hook that is a file (or a link to one); its own samples stay.
      if ((e.name.endsWith(".sample") && e.isFile) || e.isDirectory) continue;
      if (fs.remove(`${gd}/hooks/${e.name}`)) removed.push(`hooks/${e.name}`);
    }
  // Read with extensions.worktreeConfig, and pointing git at another folder's config and hooks.
  if (fs.info(`${gd}/config.worktree`) && fs.remove(`${gd}/config.worktree`)) removed.push("config.worktree");
  const commondir = fs.info(`${gd}/commondir`);
  if (commondir) {
    const common = commondir.kind === "file" ? fs.readText(`${gd}/commondir`) : null;
    if ((common === null || !trusted(resolveFrom(gd, common.trim()))) && fs.remove(`${gd}/commondir`))
      removed.push("commondir");
  }
  return removed;
}

/** Moves a planted path aside (`NAME.quarantined`, then `-2`, `-3` …) — the path itself, a link as a link; the new
 *  name, or null when it could not. */
export function quarantine(fs: FolderFs, p: string): string | null {
  for (let i = 1; i < 100; i++) {
    const to = `${p}.quarantined${i === 1 ? "" : `-${i}`}`;
    if (fs.info(to)) continue;
    return fs.rename(p, to) ? to : null;
  }
  return null;
}

/** Takes out what the child planted below the top of its folder (repositories with code git would run, links to
 *  git folders elsewhere, protected names moved aside), except where the person opened a path; says what it did. */
export function disarmNested(host: ReportHost, guard: SandboxGuard, opened: (p: string) => boolean): string[] {
  const out: string[] = [];
  const rel = (p: string) => {
    const r = guard.roots.find((root) => under(p, root));
    return r && p !== r ? p.slice(r.length + 1) : p;
  };
  const protectedConfig = new Set(guard.binds.filter((b) => b.how === "ro").map((b) => b.path));
  const trusted = (gd: string) => protectedConfig.has(`${gd}/config`);
  const writable = guard.writable ?? guard.roots;
  for (const { root, repo, scan: before } of guard.scans ?? []) {
    const after = scanFolder(host, root, repo);
    const inside = (p: string) => guard.roots.some((r) => under(p, r));
    // Repositories it made.
    const made = after.gitDirs.filter((gd) => !before.gitDirs.includes(gd) && inside(gd));
    const disarmed: string[] = [];
    const clean: string[] = [];
    for (const gd of made) {
      const fs = folderFs(host, writable, gd);
      const removed = fs ? disarmGitDir(fs, gd, trusted) : [];
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
        const fs = gd && folderFs(host, writable, gd);
        if (gd && fs && !trusted(gd) && !made.includes(gd)) disarmGitDir(fs, gd, trusted);
      }
      if (added.length)
        out.push(
          `sandbox: the child added ${listed(added.map(rel), MAX)} to the repository as submodules (gitlinks): \`git status\` enters them; their git config keeps only data`,
        );
    }
    // Project config in subfolders.
    const planted = after.names.filter((p) => !before.names.includes(p) && !opened(p));
    const moved = planted.map((p) => {
      const fs = folderFs(host, writable, p);
      const to = fs && quarantine(fs, p);
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
