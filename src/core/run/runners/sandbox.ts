// The sandbox (docs/sandbox-runners.md): bubblewrap around the child's command. Pure: the argv only; whether bwrap
// is installed, and what exists on this machine, is asked of the host (sandbox-wrap.ts). What the child sees:
//  - the whole filesystem read-only, with a private /dev, /proc and /tmp;
//  - the places where other users' and the system's Unix sockets live — /run (with /var/run and /run/user/<uid>),
//    /var/tmp — each an empty private folder: the network namespace does not stop connect() on a socket file, so
//    a socket the child cannot see is the only one it cannot reach (what must stay: /run's symlinks, the resolver's
//    file);
//  - the home folder replaced by an empty private one (so ~/.ssh, ~/.aws, shell history, … are gone), with
//    pi's agent dir rebuilt in it: a private writable folder (pi takes its locks there: `settings.json.lock`;
//    a read-only agent dir makes pi drop its settings and find no model) holding the user's entries read-only
//    (settings, models, extensions, skills, …) — without the user's own pi sessions, our store, owner records and
//    control sockets, logs, schedules and worktrees, and with a copy of auth.json holding only what the child's own
//    provider needs (child-auth.ts) in place of the user's;
//  - writable: the task's own tree — a layer over its folder (or the repository holding it), its copy where there is
//    no layer: never the user's folder itself; what the child writes there comes back only as its owner harvests
//    it (launch/harvest-rules.ts) — and its own pi session file (not the folder: other sessions' transcripts are
//    there);
//  - our records kept outside those places (a SUBAGENTS_DB elsewhere) covered too;
//  - no capabilities (as root, a capability would let it unmount the hidden folders), its own pid namespace
//    (bwrap is its init: when the owner dies, `--die-with-parent` takes the whole tree down at once);
//  - with subagents.sandboxNetwork "all", the host network; otherwise a network namespace of its own (a loopback
//    only) and the owner's proxy as its one way out, a Unix socket bound in at the same path (network.ts);
// Inherited file descriptors cross unchanged: our fd 3 event pipe and fd 4 control pipe keep working.

/** System places hidden behind an empty private folder each, and what of them stays. */
export type HiddenPlaces = {
  dirs: string[];
  /** Symlinks of those places, made again inside (they lead elsewhere: /run/shm, NixOS's /run/current-system). */
  links: { path: string; target: string }[];
  /** Files in them bound back read-only (the resolver's configuration when /etc/resolv.conf points into /run). */
  files: string[];
};

/** Our records outside the hidden places: covered before the writable folders are bound (a folder one of them
 *  may lie in: worktrees) or after them (records that must stay covered whatever is bound over them). */
export type RecordMasks = { before: string[]; after: { path: string; dir: boolean }[] };

export type SandboxSpec = {
  argv: string[];
  cwd: string;
  home: string;
  agentDir: string;
  /** The names in agentDir (the sandbox decides which come back). */
  agentEntries: string[];
  /** Folders the child must be able to write (its cwd, its worktree's git folder, its task's layer). */
  writable: string[];
  /** A task's copy shown at the folder's own path: bound from the copy, writable. */
  mapped?: { from: string; to: string }[];
  /** The child's own pi session file (it exists: made empty when new), the one file of its folder it sees. */
  sessionFile?: string;
  /** The child's own auth.json (child-auth.ts): read from a descriptor into the sandbox (a file of the sandbox's
   *  own, gone with it), or a file of the owner's bound in. */
  auth?: { fd: number } | { file: string };
  /** Files or folders the child only reads but that live in a hidden place (home, /tmp): the prompt file, pi. */
  readable: string[];
  /** Another harness's own configuration folders and files: back in the private home, writable, when they exist. */
  ownConfig?: string[];
  /** The owner's proxy socket when the network is closed (network.ts); absent: the host network. */
  netSocket?: string;
  hidden?: HiddenPlaces;
  masks?: RecordMasks;
};

/** Never shown to a child: the user's own pi sessions, our store (every other child's transcript), owner records and
 *  control sockets (steer and cancel other runs), logs, schedules, other tasks' worktrees, and the user's
 *  credentials file (a filtered copy takes its place). */
const AGENT_HIDDEN = /^(sessions|subagent-sessions|subagents\.db.*|control|logs|schedules|worktrees|auth\.json.*)$/;

/** The user's entries of pi's agent dir that come back, read-only, into the child's private one (docker too). */
export function agentDirMounts(agentDir: string, entries: string[]): string[] {
  return entries.filter((n) => !AGENT_HIDDEN.test(n)).map((n) => `${agentDir}/${n}`);
}

/** The entries that do not (sandbox-exec, which cannot rebuild a folder, denies them by path). */
export function agentDirHidden(agentDir: string, entries: string[]): string[] {
  return entries.filter((n) => AGENT_HIDDEN.test(n) && !/^auth\.json/.test(n)).map((n) => `${agentDir}/${n}`);
}

/** `p` is `root` or lies inside it. */
export const under = (p: string, root: string) => p === root || p.startsWith(root.endsWith("/") ? root : `${root}/`);

/** Why a folder (a real path) cannot be a confined child's folder, which it may write as a whole: the home folder
 *  (real path), a folder above it, or one holding pi's agent dir (credentials, the store, other runs' sockets). */
export function unconfinable(cwd: string, home: string, agentDir: string): string | null {
  if (cwd === home) return "your home folder";
  if (under(home, cwd)) return "a folder holding your home folder";
  if (under(agentDir, cwd)) return "a folder holding pi's agent dir (your credentials and sessions)";
  return null;
}

/** The folder holding an absolute path ("/" for a top-level one). */
export const dirOf = (p: string) => p.slice(0, Math.max(1, p.lastIndexOf("/")));

/** Paths in argv (the runtime, pi's entry, the child extension) that a hidden place would take away. */
export function hiddenArgvPaths(argv: string[], hiddenRoots: string[]): string[] {
  const out: string[] = [];
  for (const a of argv) {
    if (!a.startsWith("/")) continue;
    if (!hiddenRoots.some((r) => r && r !== "/" && under(a, r))) continue;
    // A script inside a package needs the packages around it too: the outermost node_modules folder's parent.
    const nm = a.indexOf("/node_modules/");
    out.push(nm > 0 ? a.slice(0, nm) : a);
  }
  return out;
}

export function bwrapArgv(s: SandboxSpec): string[] {
  const args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
  const hidden = s.hidden ?? { dirs: [], links: [], files: [] };
  for (const d of hidden.dirs) args.push("--tmpfs", d);
  for (const l of hidden.links) args.push("--symlink", l.target, l.path);
  for (const f of hidden.files) args.push("--ro-bind-try", f, f);
  // Bind order is mount order: the empty home first, then what comes back into it.
  if (s.home && s.home !== "/") args.push("--tmpfs", s.home);
  const seen = new Set<string>();
  const add = (flag: string, p: string) => {
    if (!p || seen.has(`${flag}${p}`)) return;
    seen.add(`${flag}${p}`);
    args.push(flag, p, p);
  };
  args.push("--tmpfs", s.agentDir);
  for (const p of agentDirMounts(s.agentDir, s.agentEntries)) add("--ro-bind", p);
  if (s.auth && "fd" in s.auth) args.push("--perms", "0600", "--file", String(s.auth.fd), `${s.agentDir}/auth.json`);
  // Missing on a node that does not share the owner's temp folder: then pi finds no stored credentials.
  else if (s.auth) args.push("--bind-try", s.auth.file, `${s.agentDir}/auth.json`);
  for (const p of s.masks?.before ?? []) args.push("--tmpfs", p);
  // After the agent dir: a file the child needs may live in it (the child extension, under subagents-runtime/).
  for (const p of s.readable) add("--ro-bind-try", p);
  for (const p of s.writable) add("--bind", p);
  for (const m of s.mapped ?? []) args.push("--bind", m.from, m.to);
  if (s.sessionFile) add("--bind", s.sessionFile);
  for (const p of s.ownConfig ?? []) add("--bind-try", p);
  // Last: whatever was bound above them, our records stay covered (a folder: empty; a file: /dev/null).
  for (const m of s.masks?.after ?? []) {
    if (m.dir) args.push("--tmpfs", m.path, "--remount-ro", m.path);
    else args.push("--ro-bind", "/dev/null", m.path);
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
