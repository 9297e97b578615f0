// What a task's child sees of its folder when that folder must not be written by it (docs/composing.md "What an
// isolated task sees", docs/sandbox-runners.md): the child writes a layer, and its owner takes back plain content
// when it ends (the harvest: src/host/harvest.ts). The host makes the view (src/host/task-layer.ts) the best way
// this machine offers:
//  - overlay: ONE overlay mount over the folder at its own path (the user's tree below, read-only; the task's layer
//    above) in a private mount namespace — a user namespace too when not root — that exists only for the processes
//    started through `enter`. Nothing is copied, nothing is a mount point inside the tree (a build may delete and
//    make again any folder), every ignored file is there (node_modules, .venv, tsbuildinfo, .pnp.cjs, .env) at the
//    same absolute and relative paths, with the same inodes and page cache. Linux, and only for a child that is a
//    process of this machine (a container's daemon or a Slurm node does not see our namespace);
//  - reflink / copy: where there is no overlay for the child, a copy-on-write clone or a real copy of the tree in a
//    folder of the task's own, harvested by comparing it with what it was made from.
// Pure: the shapes, the namespace's command and what records and windows say. No runtime imports.
import type { ViewMechanism, ViewRecord } from "../../isolation-types.ts";
import type { WorktreeDeps } from "../../worktree-settings.ts";
import { listed } from "../../string-list.ts";

export type { ViewMechanism, ViewRecord };

/** How this machine enters a mount namespace: a user namespace too (not root), the ids the child keeps, and whether
 *  its overlays may be `volatile` (no syncs of a layer the owner reads once: about half of a mount's cost). */
export type NamespaceWay = {
  userns: boolean;
  uid: number;
  gid: number;
  unshare: string;
  mount: string;
  volatile: boolean;
};

/** One step of the namespace's mount script, in order: an overlay (writable with an upper layer, else read-only),
 *  or a bind mount. */
export type MountStep =
  | { kind: "overlay"; lower: string[]; upper?: string; work?: string; target: string }
  | { kind: "bind"; source: string; target: string };

/** A task's layer over a folder: its own folder (in the data folder: `upper/`, `work/`, …), the folder it covers at
 *  that folder's own path, and the git folders of its repository outside it, layered too. */
export type Layer = { dir: string; root: string; gitDirs: string[] };

export type WorktreeView = {
  mechanism: ViewMechanism | "none";
  /** The folder the child sees, at its own (real) path: the repository's top folder, or the task folder. */
  root: string;
  /** Overlay: the task's layer (`upper/`, `work/`; removed once harvested) and the command a process is started
   *  under to see it (the child, its gate, the setup). */
  layer?: string;
  enter?: string[];
  /** Reflink or copy: the task's own copy of the tree, the folder the child works in instead. */
  copy?: string;
  /** Copy only: what the copy holds, in bytes. */
  bytes?: number;
  /** `.worktreeinclude` entries (their secrets are masked from then on). */
  included: string[];
  /** Why a cheaper way was not taken, when that matters to the person (shown as a task warning). */
  note?: string;
};

/** What a task asks of its view: the setting, and whether its child is a process of this machine. */
export type ViewRequest = { deps: WorktreeDeps; local: boolean };

/** overlayfs's options for a layer the owner harvests: no redirects (a renamed folder would be a pointer into the
 *  lower layer instead of its content; folders that came from the user's tree then get EXDEV on rename, which `mv`,
 *  npm, pip and pnpm answer by copying), no metacopy (an upper file always holds its data), no index. In a user
 *  namespace the layer's own marks (whiteouts' opaque folders) are `user.` xattrs: without `userxattr` removing a
 *  folder of the lower layer fails with EIO. */
export function overlayOptions(way: NamespaceWay, m: Extract<MountStep, { kind: "overlay" }>): string {
  const opts = [
    ...(way.userns ? ["userxattr"] : []),
    ...(m.upper && way.volatile ? ["volatile"] : []),
    "redirect_dir=nofollow",
    "metacopy=off",
    "index=off",
    `lowerdir=${m.lower.join(":")}`,
    ...(m.upper && m.work ? [`upperdir=${m.upper}`, `workdir=${m.work}`] : []),
  ];
  return m.upper ? opts.join(",") : `ro,${opts.join(",")}`;
}

/**
 * `/bin/sh` inside the new namespaces: runs each step (arguments in threes after the count: options or `bind`, the
 * work folder to clear or the bind's source, the target), then the rest of its arguments. A failed step ends it
 * with 126 and says where. Then it enters its own folder again by its path: a process keeps the folder it was
 * started in, which is the user's (below the new mount) until it is looked up again. overlayfs's own work folder
 * is cleared first: a `volatile` mount leaves a mark there that
 * refuses the next mount of the same layer (the child's, after the setup's), and nothing else uses it by then.
 * The arguments are only ever data to it: quoted expansions, never code.
 */
const MOUNT_SCRIPT = [
  'm="$1"; n="$2"; shift 2',
  'while [ "$n" -gt 0 ]; do',
  '  if [ "$1" = bind ]; then',
  '    "$m" -n --bind "$2" "$3" || { echo "subagents: could not bind $2 at $3" >&2; exit 126; }',
  "  else",
  '    [ -z "$2" ] || rm -rf "$2/work"',
  '    "$m" -n -t overlay overlay -o "$1" "$3" ||',
  '      { echo "subagents: could not show the task\'s layer at $3 (overlay mount failed)" >&2; exit 126; }',
  "  fi",
  "  shift 3; n=$((n - 1))",
  "done",
  // The folder this process was started in is the one below the mount: entered again by its path, through it.
  'cd -P -- "$PWD" || exit 126',
  'exec "$@"',
].join("\n");

/**
 * The command prefix that runs a command inside the view: `[...enterArgv(…), ...argv]`. Every step execs the next,
 * so the command keeps the pid it was started with (the kill protocol and the run's marks see it as before). In a
 * user namespace the caller is root there (to mount) and the command is mapped back to the caller's own ids in a
 * namespace nested inside it: it runs as the user it is, without privileges.
 */
export function enterArgv(way: NamespaceWay, steps: MountStep[]): string[] {
  const ns = way.userns ? ["--user", "--map-root-user"] : [];
  const triples = steps.flatMap((s) =>
    s.kind === "bind" ? ["bind", s.source, s.target] : [overlayOptions(way, s), s.work ?? "", s.target],
  );
  const back =
    way.userns && way.uid !== 0 ? [way.unshare, `--map-user=${way.uid}`, `--map-group=${way.gid}`, "--"] : [];
  return [
    way.unshare,
    ...ns,
    "--mount",
    "--propagation",
    "private",
    "/bin/sh",
    "-c",
    MOUNT_SCRIPT,
    "subagents-view",
    way.mount,
    String(steps.length),
    ...triples,
    ...back,
  ];
}

/** overlayfs's option string splits at commas and colons and takes backslash escapes: such paths are not mounted. */
export const overlaySafePath = (p: string) => !/[,:\\\n]/.test(p);

/**
 * The best way for one task, from what this machine offers: an overlay when its child is a process of this
 * machine, else a copy-on-write clone, else a copy. `copy` asks for a real copy; `off` for what git tracks only.
 */
export function chooseMechanism(
  req: ViewRequest,
  offers: { overlay: boolean; reflink: boolean },
): ViewMechanism | "none" {
  if (req.deps === "off") return "none";
  if (req.deps === "copy") return "copy";
  if (req.local && offers.overlay) return "overlay";
  return offers.reflink ? "reflink" : "copy";
}

const MB = 1024 * 1024;

export const viewRecord = (v: WorktreeView): ViewRecord => ({
  mechanism: v.mechanism,
  ...(v.bytes !== undefined ? { bytes: v.bytes } : {}),
  included: v.included,
});

/** A task warning when the view cost something worth knowing (a real copy), with why it was not cheaper. */
export function viewWarning(v: WorktreeView, what = "the repository"): string | null {
  const size = `${Math.max(1, Math.round((v.bytes ?? 0) / MB))} MB`;
  if (v.mechanism === "copy" && v.bytes)
    return `the task got a copy of ${what}: ${size} (${v.note ?? "no copy-on-write here: see subagents doctor"})`;
  return v.note ? `the task's view: ${v.note}${v.bytes ? ` (${size})` : ""}` : null;
}

/** Names for a warning: a few of them. */
export const someOf = (names: string[], max = 5) => listed(names, max);
