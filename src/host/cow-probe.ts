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
const findProgram = (name: string) =>
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

/** Mounts one overlay the way a task would, writes through it and checks the user's side stayed as it was. */
async function tryOverlay(dataRoot: string, way: NamespaceWay): Promise<string | null> {
  fs.mkdirSync(dataRoot, { recursive: true, mode: 0o700 });
  const dir = fs.mkdtempSync(path.join(dataRoot, `${PROBE_PREFIX}${process.pid}-`));
  try {
    const [lower, upper, work, target] = ["lower", "upper", "work", "merged"].map((n) => path.join(dir, n));
    for (const d of [lower, upper, work, target]) fs.mkdirSync(d);
    fs.writeFileSync(path.join(lower, "f"), "user\n");
    const argv = [
      ...enterArgv(way, [{ lower, upper, work, target }]),
      "/bin/sh",
      "-c",
      'echo task > "$1/f" && cat "$1/f" && id -u',
      "probe",
      target,
    ];
    const r = await runProgram(argv[0], argv.slice(1), { cwd: dir, timeoutMs: PROBE_MS });
    if (r.code !== 0) return lastLine(r.stderr || r.stdout) || `exit ${r.code}`;
    if (r.stdout !== `task\n${way.uid}\n`) return `unexpected answer: ${JSON.stringify(r.stdout.slice(0, 80))}`;
    if (fs.readFileSync(path.join(lower, "f"), "utf8") !== "user\n") return "a write reached the lower folder";
    return null;
  } finally {
    removeTree(dir);
  }
}

const overlays = new Map<string, Promise<NamespaceWay | string>>();

/** How a task's overlay is entered on this machine, or why it cannot be (then a copy-on-write clone or a copy). */
export function overlayWay(dataRoot: string): Promise<NamespaceWay | string> {
  let known = overlays.get(dataRoot);
  if (!known) overlays.set(dataRoot, (known = findOverlayWay(dataRoot)));
  return known;
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
    const r = await runProgram("cp", [...reflinkFlags(), sample, path.join(dir, "clone")], {
      cwd: dir,
      timeoutMs: PROBE_MS,
    });
    return r.code === 0 ? true : `no reflinks here (${lastLine(r.stderr) || `cp exit ${r.code}`})`;
  } finally {
    removeTree(dir);
  }
}

/** `cp` flags for a copy-on-write clone: GNU cp's reflink, macOS cp's clonefile. Never a silent full copy. */
export const reflinkFlags = () => (process.platform === "darwin" ? ["-c"] : ["--reflink=always"]);
