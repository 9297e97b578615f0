// Which copy-on-write ways this machine offers for an isolated task's view of the ignored folders
// (core/run/launch/worktree-view.ts), found by trying each for real once per process and data folder: an overlay
// mount in a private mount namespace (as root: a mount namespace alone; otherwise inside a user namespace, which
// some systems forbid — Ubuntu's AppArmor rule, a container's seccomp profile — and whose data folder must be a
// filesystem overlayfs can write its layers on), and reflinks between the repository's filesystem and the data
// folder's (btrfs, xfs, APFS; never across two filesystems). A probe writes only in the data folder.
import * as fs from "node:fs";
import * as path from "node:path";
import { enterArgv, type NamespaceWay } from "../core/run/launch/worktree-view.ts";
import { lastLine, runProgram } from "./git-command.ts";
import { which } from "./pi-discovery.ts";

const PROBE_MS = 15_000;
/** A probe's folder in the data folder: `.cow-probe-<pid>-…`, so one its process left behind can be removed. */
export const PROBE_PREFIX = ".cow-probe-";

const SYSTEM_BINS = ["/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/** A program on PATH, else in the system folders (a minimal PATH may lack /usr/sbin). */
export const findProgram = (name: string) =>
  which(name, [...(process.env.PATH ?? "").split(":").filter((d) => d.startsWith("/")), ...SYSTEM_BINS].join(":"));

/** Removes a folder overlayfs worked in: its `work/work` is left mode 000, which a plain recursive rm cannot enter. */
export function removeTree(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
    return;
  } catch {
    // a folder we may not enter: open it up, then again
  }
  const openUp = (d: string) => {
    try {
      fs.chmodSync(d, 0o700);
      for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) openUp(path.join(d, e.name));
    } catch {
      // gone, or not ours
    }
  };
  openUp(dir);
  fs.rmSync(dir, { recursive: true, force: true });
}

/** What `removeLater` renamed a folder to: `.<name>.gone-<pid>-<n>` (a dot file: nothing that lists the folder's
 *  tasks sees it), so one a killed process left is swept. */
export const GONE = /\.gone-(\d+)-\d+$/;
let gone = 0;

/** Takes a folder out of the way at once (renamed beside itself) and removes it in the background: a task's layer
 *  or copy can hold as many files as the task wrote, and nothing waits for their removal but the process's exit. */
export function removeLater(dir: string): void {
  const away = path.join(path.dirname(dir), `.${path.basename(dir)}.gone-${process.pid}-${gone++}`);
  try {
    fs.renameSync(dir, away);
  } catch {
    if (fs.existsSync(dir)) removeTree(dir);
    return;
  }
  const done = fs.promises
    .rm(away, { recursive: true, force: true })
    .catch(() => removeTree(away))
    .finally(() => pending.delete(done));
  pending.add(done);
}

const pending = new Set<Promise<void>>();
/** Resolves once every removal started so far has ended (a test's look at the data folder waits for it). */
export const removalsDone = async (): Promise<void> => {
  while (pending.size) await Promise.all([...pending]);
};

/** Mounts one overlay the way a task would, writes through it — a file changed, a folder of the lower layer removed
 *  and made again (without `userxattr` in a user namespace that is EIO) — and checks the user's side stayed as it
 *  was. */
async function tryOverlay(dataRoot: string, way: NamespaceWay): Promise<string | null> {
  fs.mkdirSync(dataRoot, { recursive: true, mode: 0o700 });
  const dir = fs.mkdtempSync(path.join(dataRoot, `${PROBE_PREFIX}${process.pid}-`));
  try {
    const [lower, upper, work, target] = ["lower", "upper", "work", "merged"].map((n) => path.join(dir, n));
    for (const d of [lower, upper, work, target]) fs.mkdirSync(d);
    fs.writeFileSync(path.join(lower, "f"), "user\n");
    fs.mkdirSync(path.join(lower, "d"));
    fs.writeFileSync(path.join(lower, "d", "g"), "user\n");
    const argv = [
      ...enterArgv(way, [{ kind: "overlay", lower: [lower], upper, work, target }]),
      "/bin/sh",
      "-c",
      'echo task > "$1/f" && rm -r "$1/d" && mkdir "$1/d" && cat "$1/f" && id -u',
      "probe",
      target,
    ];
    const r = await runProgram(argv[0], argv.slice(1), { cwd: dir, timeoutMs: PROBE_MS });
    if (r.code !== 0) return lastLine(r.stderr || r.stdout) || `exit ${r.code}`;
    if (r.stdout !== `task\n${way.uid}\n`) return `unexpected answer: ${JSON.stringify(r.stdout.slice(0, 80))}`;
    if (fs.readFileSync(path.join(lower, "f"), "utf8") !== "user\n" || !fs.existsSync(path.join(lower, "d", "g")))
      return "a write reached the lower folder";
    return null;
  } finally {
    removeTree(dir);
  }
}

const overlays = new Map<string, Promise<NamespaceWay | string>>();

/** How a task's overlay is entered on this machine, or why it cannot be (then a copy-on-write clone or a copy).
 *  `fresh` tries again (doctor), else a way found since this machine booted, by this user, is taken from the data
 *  folder (`.overlay-way.json`): trying costs a mount per process, paid by every `run`. */
export function overlayWay(dataRoot: string, fresh = false): Promise<NamespaceWay | string> {
  let known = fresh ? undefined : overlays.get(dataRoot);
  if (!known) overlays.set(dataRoot, (known = remembered(dataRoot, fresh)));
  return known;
}

/** What identifies a finding: this boot of this kernel, this user, the tools where they are. */
function wayKey(): string {
  const read = (f: string) => {
    try {
      return fs.readFileSync(f, "utf8").trim();
    } catch {
      return "";
    }
  };
  return [read("/proc/sys/kernel/random/boot_id"), read("/proc/sys/kernel/osrelease"), process.getuid?.()].join(" ");
}

async function remembered(dataRoot: string, fresh: boolean): Promise<NamespaceWay | string> {
  const file = path.join(dataRoot, ".overlay-way.json");
  const key = wayKey();
  if (!fresh) {
    try {
      const saved = JSON.parse(fs.readFileSync(file, "utf8")) as { key: string; way: NamespaceWay };
      if (saved.key === key && saved.way && fs.existsSync(saved.way.unshare)) return saved.way;
    } catch {
      // none yet, or unreadable: tried below
    }
  }
  const way = await findOverlayWay(dataRoot);
  // Only a way that works is kept (what does not work is tried again next time: a sysctl may change it).
  try {
    if (typeof way === "object") fs.writeFileSync(file, JSON.stringify({ key, way }), { mode: 0o600 });
    else fs.rmSync(file, { force: true });
  } catch {
    // a data folder we cannot write: tried again next time
  }
  return way;
}

async function findOverlayWay(dataRoot: string): Promise<NamespaceWay | string> {
  if (process.platform !== "linux") return "overlay mounts are a Linux feature";
  const unshare = findProgram("unshare");
  const mount = findProgram("mount");
  if (!unshare || !mount) return "unshare or mount (util-linux) is not installed";
  const uid = process.getuid?.() ?? -1;
  const gid = process.getgid?.() ?? -1;
  // Root mounts in a mount namespace of its own; a root without CAP_SYS_ADMIN (a container) may still have user
  // namespaces. `volatile` (Linux 5.10) first, then without it.
  const ways: NamespaceWay[] = (uid === 0 ? [false, true] : [true]).flatMap((userns) =>
    [true, false].map((volatile) => ({ userns, uid, gid, unshare, mount, volatile })),
  );
  const why: string[] = [];
  for (const way of ways) {
    const problem = await tryOverlay(dataRoot, way).catch((err: Error) => err.message);
    if (!problem) return way;
    if (!way.volatile) why.push(`${way.userns ? "in a user namespace" : "in a mount namespace"}: ${problem}`);
  }
  return `no overlay mount here (${why.join("; ")})`;
}

const reflinks = new Map<string, Promise<true | string>>();

/** Whether a file on the repository's filesystem can be cloned into the data folder (same filesystem, reflinks). */
export function reflinkWorks(sample: string, dataRoot: string): Promise<true | string> {
  let dev = "";
  try {
    dev = String(fs.statSync(sample).dev);
  } catch {
    return Promise.resolve(`cannot read ${sample}`);
  }
  const key = `${dev}\0${dataRoot}`;
  let known = reflinks.get(key);
  if (!known) reflinks.set(key, (known = tryReflink(sample, dataRoot)));
  return known;
}

async function tryReflink(sample: string, dataRoot: string): Promise<true | string> {
  fs.mkdirSync(dataRoot, { recursive: true, mode: 0o700 });
  const dir = fs.mkdtempSync(path.join(dataRoot, `${PROBE_PREFIX}${process.pid}-`));
  try {
    const r = await runProgram(cpProgram(), [...reflinkFlags(), sample, path.join(dir, "clone")], {
      cwd: dir,
      timeoutMs: PROBE_MS,
    });
    return r.code === 0 ? true : `no reflinks here (${lastLine(r.stderr) || `cp exit ${r.code}`})`;
  } finally {
    removeTree(dir);
  }
}

/** GNU (or macOS) cp, found in the system's folders when PATH does not name it. */
export const cpProgram = () => findProgram("cp") ?? "cp";

/** `cp` flags for a copy-on-write clone: GNU cp's reflink, macOS cp's clonefile. Never a silent full copy. */
export const reflinkFlags = () => (process.platform === "darwin" ? ["-c"] : ["--reflink=always"]);
