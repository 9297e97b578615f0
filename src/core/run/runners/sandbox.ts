// The sandbox (docs/sandbox-runners.md): bubblewrap around the child's command. Pure: the argv only; whether bwrap
// is installed is asked of the host (place.ts). What the child sees:
//  - the whole filesystem read-only, with a private /dev, /proc and /tmp;
//  - the home folder replaced by an empty private one (so ~/.ssh, ~/.aws, shell history, … are gone), with
//    pi's agent dir rebuilt in it: a private writable folder (pi takes its locks there: `settings.json.lock`;
//    a read-only agent dir makes pi drop its settings and find no model) holding the user's entries read-only
//    (settings, models, extensions, skills, …) — except auth.json, writable, so a refreshed OAuth token is kept
//    (providers rotate refresh tokens) — and without the user's own pi sessions and our store;
//  - writable: the task's folder (its worktree when isolated), the folder of its pi session file, and the
//    worktree's own git folder (so `git status`/`git add` work there);
//  - no capabilities (as root, a capability would let it unmount the hidden folders), its own pid namespace
//    (bwrap is its init: when the owner dies, `--die-with-parent` takes the whole tree down at once);
//  - with subagents.sandboxNetwork "all", the host network; otherwise a network namespace of its own (a loopback
//    only) and the owner's proxy as its one way out, a Unix socket bound in at the same path (network.ts);
//  - inside those writable folders, the paths that would run code later outside the sandbox (git hooks and
//    config, pi's project folder, editor task files: sandbox-guard.ts) read-only again;
// Inherited file descriptors cross unchanged: our fd 3 event pipe and fd 4 control pipe keep working.
import type { GuardBind } from "./sandbox-guard.ts";

export type SandboxSpec = {
  argv: string[];
  cwd: string;
  home: string;
  agentDir: string;
  /** The names in agentDir (the sandbox decides which come back). */
  agentEntries: string[];
  /** Folders the child must be able to write (its cwd and its session file's folder, …). */
  writable: string[];
  /** Files or folders the child only reads but that live in a hidden place (home, /tmp): the prompt file, pi. */
  readable: string[];
  /** Another harness's own configuration folders and files: back in the private home, writable, when they exist. */
  ownConfig?: string[];
  /** Protected paths inside the writable folders, mounted after them (sandbox-guard.ts). */
  guard?: GuardBind[];
  /** The owner's proxy socket when the network is closed (network.ts); absent: the host network. */
  netSocket?: string;
};

/** Never shown to a child: the user's own pi sessions, and our store (every other child's transcript). */
const AGENT_HIDDEN = /^(sessions|subagent-sessions|subagents\.db.*)$/;
const AGENT_WRITABLE = new Set(["auth.json"]);

/** The user's entries of pi's agent dir that come back into the child's private one (the docker runner too). */
export function agentDirMounts(agentDir: string, entries: string[]): { path: string; writable: boolean }[] {
  return entries
    .filter((n) => !AGENT_HIDDEN.test(n))
    .map((n) => ({ path: `${agentDir}/${n}`, writable: AGENT_WRITABLE.has(n) }));
}

const under = (p: string, root: string) => p === root || p.startsWith(root.endsWith("/") ? root : `${root}/`);

/** Paths in argv (the runtime, pi's entry, the child extension) that the hidden home or /tmp would take away. */
export function hiddenArgvPaths(argv: string[], home: string): string[] {
  const out: string[] = [];
  for (const a of argv) {
    if (!a.startsWith("/")) continue;
    if (!under(a, home) && !under(a, "/tmp")) continue;
    // A script inside a package needs the packages around it too: the outermost node_modules folder's parent.
    const nm = a.indexOf("/node_modules/");
    out.push(nm > 0 ? a.slice(0, nm) : a);
  }
  return out;
}

export function bwrapArgv(s: SandboxSpec): string[] {
  const args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
  // Bind order is mount order: the empty home first, then what comes back into it.
  if (s.home && s.home !== "/") args.push("--tmpfs", s.home);
  const seen = new Set<string>();
  const add = (flag: string, p: string) => {
    if (!p || seen.has(`${flag}${p}`)) return;
    seen.add(`${flag}${p}`);
    args.push(flag, p, p);
  };
  args.push("--tmpfs", s.agentDir);
  for (const m of agentDirMounts(s.agentDir, s.agentEntries)) add(m.writable ? "--bind" : "--ro-bind", m.path);
  // After the agent dir: a file the child needs may live in it (the child extension, under subagents-runtime/).
  for (const p of s.readable) add("--ro-bind-try", p);
  for (const p of s.writable) add("--bind", p);
  for (const p of s.ownConfig ?? []) add("--bind-try", p);
  // After the writable folders they lie in. A missing one gets an empty read-only tmpfs: bwrap makes the mount
  // point (an empty folder, left behind) and nothing can be created there.
  for (const g of s.guard ?? []) {
    if (g.how === "empty") args.push("--tmpfs", g.path, "--remount-ro", g.path);
    // Not deduplicated: a worktree's git folder, writable already, is bound again over its read-only parent.
    else args.push(g.how === "ro" ? "--ro-bind" : "--bind", g.path, g.path);
  }
  // After /tmp's tmpfs (the socket lives in the owner's private temp folder).
  if (s.netSocket) args.push("--bind", s.netSocket, s.netSocket);
  args.push(
    "--unshare-all",
    ...(s.netSocket ? [] : ["--share-net"]),
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--chdir",
    s.cwd,
    "--",
    ...s.argv,
  );
  return args;
}
