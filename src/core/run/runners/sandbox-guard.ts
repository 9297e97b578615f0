// Paths a sandboxed child must not write even inside its writable folders: files that the person's own
// tools run later, outside the sandbox and with the person's rights — git's hooks and config, pi's (and other
// agents') project configuration, editor task files, shell startup files. Each is bound read-only over the
// writable folder; a protected folder that does not exist yet gets an empty read-only folder in its place (the
// mount point is left behind, empty: bubblewrap and docker create it in the person's folder). Files and folders
// that are missing and cannot get a placeholder without harm (an empty `.git/commondir` would break git, an empty
// `.vscode` would be litter in every project) are checked after the run instead (guard-report.ts). Below the top, a
// bounded walk (nested-scan.ts) finds repositories and project config in subfolders, and the repository's populated
// submodules at any depth: what exists is protected the same way; what the child makes is dealt with after the run.
// The bubblewrap, docker and sandbox-exec wrappers share this list; docs/sandbox-runners.md "Protected paths" says why each is here.
import type { Host } from "../../host.ts";
import { type FolderScan, gitdirOf, resolveFrom, scanFolder } from "./nested-scan.ts";
import { dirOf, under } from "./sandbox.ts";

/** One mount over a writable folder: read-only, writable again inside a read-only one, or an empty placeholder. */
export type GuardBind = { path: string; how: "ro" | "rw" | "empty" };

export type SandboxGuard = {
  binds: GuardBind[];
  /** Every protected path (bound or missing): refused writes that name one become the task's warnings. */
  watched: string[];
  /** Protected paths missing at the start and not covered by a placeholder: reported (or removed) if created. */
  missing: string[];
  /** The task's folders, to name protected paths relative to them. */
  roots: string[];
  /** Every folder the child could write (its task folder, its worktree's git folder): the owner's work after the run
   *  there follows no link (Host.within). */
  writable?: string[];
  home: string;
  /** What the person opened with subagents.sandboxWritable, as absolute paths. */
  open?: string[];
  /** What the walk of each task folder found before the run (compared after it: nested-report.ts). */
  scans?: { root: string; repo?: { top: string; gitDir: string }; scan: FolderScan }[];
};

type GuardHost = Pick<Host, "stat" | "readText" | "listDir" | "readBytes" | "realpath" | "readLink">;

/** pi's project folder: extensions, settings, MCP servers, skills, prompts, agents and workflows all load from it. */
const PI_DIR = ".pi";
/** Inside `.pi`, what an agent is told it may keep current (agent-memory.ts): notes, not code. */
const PI_WRITABLE = ["agent-memory", "agent-memory-local"];
/** At the top of a writable folder: read-only when present, reported when created. */
const TOP_LEVEL = [
  ".agents", // pi loads .agents/skills from the folder and its parents (trusted projects)
  ".claude", // Claude Code: settings.json hooks run commands; commands/ and agents/
  ".mcp.json", // Claude Code's project MCP servers (commands it starts)
  ".codex", // Codex's project config
  ".gemini", // Gemini CLI: settings.json (MCP servers, tool commands)
  ".opencode", // opencode loads plugins (code) from it
  "opencode.json",
  "opencode.jsonc",
  ".vscode", // tasks.json (runOn: folderOpen), settings.json pointing tools at programs
  ".idea", // JetBrains run configurations and startup tasks
  ".envrc", // direnv, when the folder is allowed by prefix (whitelist) rather than per file
  ".gitconfig", // the rest matter when a writable folder is the home folder
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
];

/** `hooksPath = …` of a git config file (any section spelling; git's own key is core.hooksPath). */
function hooksPaths(text: string | null): string[] {
  if (!text) return [];
  return [...text.matchAll(/^\s*hookspath\s*=\s*"?([^"\n]*?)"?\s*$/gim)].map((m) => m[1].trim()).filter(Boolean);
}

function resolve(p: string, base: string, home: string): string {
  if (p.startsWith("~/")) return `${home}${p.slice(1)}`;
  if (p.startsWith("/")) return p;
  return resolveFrom(base, p);
}

/** The protected paths of the task's folders `roots`, and of git folders among the other `writable` ones (a
 *  worktree's git folder). Only what lies in a writable folder is bound: the rest of the filesystem is read-only. */
export function sandboxGuard(
  host: GuardHost,
  o: { roots: string[]; writable: string[]; home: string; xdgConfig?: string; open?: string[]; cwd: string },
): SandboxGuard {
  const binds = new Map<string, GuardBind["how"]>();
  const missing = new Set<string>();
  const watched = new Set<string>();
  const inRoot = (p: string) => o.writable.some((r) => under(p, r));
  /** Where a mount over `path` goes. A mount is made at a real path only: bubblewrap follows links, so a protected
   *  name that is a link (a tracked `pkg/.vscode` pointing nowhere, a `.git/hooks` a run left pointing at the home)
   *  would fail the whole sandbox, or show the child what the link points at. A link that stays inside the writable
   *  folders has its target protected instead; one that leads out of them needs nothing (the rest is read-only or
   *  hidden); one that leads nowhere yet has its target looked at after the run; a link on the way there means the
   *  real place is elsewhere (found under its own name when it is inside). */
  const placeOf = (path: string): string | null => {
    const parent = dirOf(path);
    // The nearest folder on the way that exists (a placeholder's missing parents are made inside it) must be real.
    let there = parent;
    while (there !== "/" && !host.stat(there) && host.readLink(there) === null) there = dirOf(there);
    if (host.realpath(there) !== there) return null;
    const link = host.readLink(path);
    if (link === null) return path;
    const real = host.realpath(path);
    if (real) return inRoot(real) ? real : null;
    const target = resolveFrom(parent, link);
    if (inRoot(target)) {
      watched.add(target);
      missing.add(target);
    }
    return null;
  };
  const bind = (path: string, how: GuardBind["how"]) => {
    if (how !== "rw" && !inRoot(path)) return;
    if (how !== "rw") watched.add(path);
    const at = placeOf(path);
    if (at === null || (at !== path && how === "empty")) return;
    if (!binds.has(at)) binds.set(at, how);
    if (how !== "rw") watched.add(at);
  };
  const roIfThere = (path: string) => {
    if (!inRoot(path)) return;
    // A link is there too, even one that leads nowhere (bind decides what of it to protect).
    if (host.stat(path) || host.readLink(path) !== null) bind(path, "ro");
    else {
      watched.add(path);
      missing.add(path);
    }
  };
  const userHooks = [
    ...hooksPaths(host.readText(`${o.home}/.gitconfig`)),
    ...hooksPaths(host.readText(`${o.xdgConfig ?? `${o.home}/.config`}/git/config`)),
  ];

  /** A git folder: its config, hooks and the files that point git elsewhere. */
  const gitDir = (gd: string, shared: boolean) => {
    // A mount point of its own: the child cannot move it aside and put a planted one in its place.
    if (inRoot(gd)) bind(gd, "rw");
    roIfThere(`${gd}/config`);
    if (host.stat(`${gd}/hooks`)?.isDirectory) bind(`${gd}/hooks`, "ro");
    // Hooks run from the shared folder only: a linked worktree's own folder needs no placeholder.
    else if (shared) bind(`${gd}/hooks`, "empty");
    // Read when extensions.worktreeConfig is set; and commondir points git at another folder's config and hooks.
    roIfThere(`${gd}/config.worktree`);
    roIfThere(`${gd}/commondir`);
    for (const sub of ["modules", "worktrees"]) {
      for (const e of host.listDir(`${gd}/${sub}`)) {
        if (!e.isDirectory) continue;
        const d = `${gd}/${sub}/${e.name}`;
        for (const f of ["config", "hooks", "config.worktree", "commondir"])
          if (host.stat(`${d}/${f}`)) bind(`${d}/${f}`, "ro");
      }
    }
  };

  /** The repository whose work tree is `top` (`.git` a folder, or a file naming a linked worktree's folder); its
   *  git folder (where its index is) when there is one. */
  const repo = (top: string): string | undefined => {
    const dotgit = `${top}/.git`;
    const st = host.stat(dotgit);
    if (!st) return;
    let gd = dotgit;
    if (st.isFile) {
      if (inRoot(dotgit)) bind(dotgit, "ro");
      const target = gitdirOf(host, dotgit);
      if (!target) return;
      gd = resolve(target, top, o.home);
    }
    const common = resolve((host.readText(`${gd}/commondir`) ?? ".").trim() || ".", gd, o.home);
    if (common !== gd && !inRoot(common)) {
      // A linked worktree (an isolated task's): the shared git folder may sit in the hidden home or /tmp. It comes
      // back read-only — config and hooks stay so — with this worktree's own folder writable again over it, and
      // the objects, refs and logs a commit or a branch writes: data, not code.
      binds.set(common, "ro");
      for (const f of ["config", "hooks", "info"]) watched.add(`${common}/${f}`);
      if (inRoot(gd)) binds.set(gd, "rw");
      for (const d of ["objects", "refs", "logs"])
        if (host.stat(`${common}/${d}`)?.isDirectory) bind(`${common}/${d}`, "rw");
    }
    gitDir(gd, common === gd);
    if (common !== gd) gitDir(common, true);
    for (const h of [
      ...userHooks,
      ...hooksPaths(host.readText(`${common}/config`)),
      ...hooksPaths(host.readText(`${gd}/config.worktree`)),
    ]) {
      const p = resolve(h, top, o.home);
      if (!inRoot(p)) continue;
      bind(p, host.stat(p) ? "ro" : "empty");
    }
    return gd;
  };
  const scans: NonNullable<SandboxGuard["scans"]> = [];

  /** pi's project folder: read-only, the agents' memory notes in it writable. */
  const piDir = (pi: string) => {
    bind(pi, "ro");
    for (const w of PI_WRITABLE) if (host.stat(`${pi}/${w}`)?.isDirectory) bind(`${pi}/${w}`, "rw");
  };

  for (const root of o.roots) {
    // The repository holding the folder, when its top is at or above it.
    let holder: { top: string; gitDir: string } | undefined;
    for (let dir = root, i = 0; dir && i < 64; dir = dirOf(dir), i++) {
      if (host.stat(`${dir}/.git`)) {
        const gitDir = repo(dir);
        if (gitDir) holder = { top: dir, gitDir };
        break;
      }
      if (dir === "/") break;
    }
    const pi = `${root}/${PI_DIR}`;
    if (host.stat(pi)?.isDirectory) piDir(pi);
    else if (!host.stat(pi)) bind(pi, "empty");
    for (const name of TOP_LEVEL) roIfThere(`${root}/${name}`);
    // Below the top: repositories, bare repositories and project config in subfolders, and populated submodules at
    // any depth, protected like the top's.
    const scan = scanFolder(host, root, holder);
    for (const top of [...scan.repos, ...(scan.gitlinks ?? [])]) repo(top);
    for (const gd of scan.gitDirs) if (inRoot(gd) && !binds.has(`${gd}/config`)) gitDir(gd, true);
    for (const p of scan.names) {
      if (p.endsWith(`/${PI_DIR}`) && host.stat(p)?.isDirectory) piDir(p);
      else bind(p, "ro");
    }
    scans.push({ root, repo: holder, scan });
  }

  return opened(
    {
      binds: [...binds].map(([path, how]) => ({ path, how })),
      watched: [...watched],
      missing: [...missing],
      roots: o.roots,
      writable: o.writable,
      home: o.home,
      scans,
    },
    o.open ?? [],
    o.cwd,
    o.home,
    host,
  );
}

/** subagents.sandboxWritable: what the person opened on purpose (relative to the task folder, absolute, or ~/). */
function opened(g: SandboxGuard, open: string[], cwd: string, home: string, host: GuardHost): SandboxGuard {
  if (!open.length) return g;
  const paths = open.map((p) => resolve(p, cwd, home));
  const isOpen = (p: string) => paths.some((o) => under(p, o));
  const binds = g.binds.filter((b) => b.how === "rw" || !isOpen(b.path));
  // Opened inside a protected folder (`.pi/agents` in `.pi`): writable again there, when it exists.
  for (const p of paths)
    if (binds.some((b) => b.how !== "rw" && under(p, b.path) && p !== b.path) && host.stat(p))
      binds.push({ path: p, how: "rw" });
  return {
    ...g,
    binds,
    watched: g.watched.filter((p) => !isOpen(p)),
    missing: g.missing.filter((p) => !isOpen(p)),
    open: paths,
  };
}
