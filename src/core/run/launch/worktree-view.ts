// What an isolated task sees of its repository besides what git tracks (docs/composing.md "What an isolated task
// sees"): the repository's ignored folders (node_modules, .venv, vendor/, build caches) and the ignored files its
// `.worktreeinclude` lists. The host makes the view (src/host/worktree-view.ts) the cheapest way this machine
// offers, and the child, its gate and the setup command run in it:
//  - overlay: each folder is an overlay mount (the user's folder below, a layer of the task's own above) in a private
//    mount namespace — a user namespace too when not root — that exists only for the processes started through
//    `enter`. Nothing is copied; what the task changes lands in its own layer. Linux, and only for a child that is a
//    process of this machine (a container's daemon or a Slurm node does not see our namespace);
//  - reflink: a copy-on-write clone of each folder in the worktree (btrfs, xfs, APFS): the data is shared until
//    written, the file entries are not;
//  - copy: a real copy — what the machine falls back to when it has neither; it costs the folders' size per task.
// Pure: the shapes, the namespace's command and what records and windows say. No runtime imports.
import type { ViewMechanism, ViewRecord } from "../../isolation-types.ts";
import type { WorktreeDeps } from "../../worktree-settings.ts";
import { listed } from "../../string-list.ts";

export type { ViewMechanism, ViewRecord };

/** One overlay mount: the user's folder (read only), the task's layer and overlayfs's work folder, the mount point. */
export type OverlayMount = { lower: string; upper: string; work: string; target: string };

/** How this machine enters a mount namespace: a user namespace too (not root), the ids the child keeps, and whether
 *  its overlays may be `volatile` (no syncs of a layer thrown away anyway: about half of a mount's cost). */
export type NamespaceWay = {
  userns: boolean;
  uid: number;
  gid: number;
  unshare: string;
  mount: string;
  volatile: boolean;
};

export type WorktreeView = {
  mechanism: ViewMechanism | "none";
  /** The ignored folders the task sees (relative to the repository's top folder). */
  folders: string[];
  /** Ignored files and folders `.worktreeinclude` named, copied into the worktree. */
  included: string[];
  /** Overlay only: the command a process is started under to see the view (the child, its gate, the setup). */
  enter?: string[];
  /** Overlay only: where the task's own layers are kept while it runs (removed with the worktree). */
  dir?: string;
  /** Copy only: what the folders' copy holds, in bytes. */
  bytes?: number;
  /** Why a cheaper way was not taken, when that matters to the person (shown as a task warning). */
  note?: string;
};

/** What a task asks of its view: the setting, and whether its child is a process of this machine. */
export type ViewRequest = { deps: WorktreeDeps; local: boolean };

/**
 * `/bin/sh` inside the new namespaces: mounts each overlay (arguments in fours after the count), then runs the rest
 * of its arguments. A failed mount ends it with 126 and says which folder. overlayfs's own work folder is cleared
 * first: a `volatile` mount leaves a mark there that refuses the next mount of the same layer (the child's, after
 * the setup's), and nothing else uses it by then.
 */
const MOUNT_SCRIPT = [
  'm="$1"; o="$2"; n="$3"; shift 3',
  'while [ "$n" -gt 0 ]; do',
  '  rm -rf "$3/work"',
  '  "$m" -n -t overlay overlay -o "$o""lowerdir=$1,upperdir=$2,workdir=$3" "$4" ||',
  '    { echo "subagents: could not show $1 in the task\'s worktree (overlay mount at $4 failed)" >&2; exit 126; }',
  "  shift 4; n=$((n - 1))",
  "done",
  'exec "$@"',
].join("\n");

/**
 * The command prefix that runs a command inside the view: `[...enterArgv(…), ...argv]`. Every step execs the next,
 * so the command keeps the pid it was started with (the kill protocol and the run's marks see it as before). In a
 * user namespace the caller is root there (to mount) and the command is mapped back to the caller's own ids in a
 * namespace nested inside it: it runs as the user it is, without privileges.
 */
export function enterArgv(way: NamespaceWay, mounts: OverlayMount[]): string[] {
  const ns = way.userns ? ["--user", "--map-root-user"] : [];
  const quads = mounts.flatMap((m) => [m.lower, m.upper, m.work, m.target]);
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
    way.volatile ? "volatile," : "",
    String(mounts.length),
    ...quads,
    ...back,
  ];
}

/** overlayfs's option string splits at commas and colons and takes backslash escapes: such paths are not mounted. */
export const overlaySafePath = (p: string) => !/[,:\\\n]/.test(p);

/**
 * The cheapest way for one task, from what this machine offers: an overlay when its child is a process of this
 * machine, else a copy-on-write clone, else a copy. `copy` asks for a real copy; `off` for none.
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
  folders: v.folders,
  included: v.included,
});

/** A task warning when the view cost something worth knowing (a real copy), with why it was not cheaper. */
export function viewWarning(v: WorktreeView): string | null {
  const size = `${Math.max(1, Math.round((v.bytes ?? 0) / MB))} MB`;
  if (v.mechanism === "copy" && v.folders.length)
    return `the repository's ignored folders (${listed(v.folders)}) were copied into the worktree: ${size} (${v.note})`;
  return v.note ? `ignored folders: ${v.note}${v.bytes ? ` (${size})` : ""}` : null;
}
