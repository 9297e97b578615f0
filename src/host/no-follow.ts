// File work in a folder someone else can write — a sandboxed child's task folder, the shared temp folder — that no
// link planted there can turn against its owner. Every path is walked from a root the owner trusts, one folder at a
// time, each opened without following a symlink (O_NOFOLLOW | O_DIRECTORY) and checked to be a folder of this user;
// the last step acts inside the folder it holds open (Linux's /proc/self/fd/N/NAME is openat's path form), so a
// folder swapped for a link between two steps is refused instead of entered. A file is read or rewritten only when it
// is a plain file of this user with one link (never a FIFO, a device, another user's file, or a hard link to a file
// elsewhere); a folder is removed without following anything in it. Where /proc is missing (macOS) each step is an
// lstat of the path instead: the same refusals, without the guarantee against a swap in between.
import * as fs from "node:fs";
import type { DirEntry, FolderFs, NodeInfo } from "../core/host.ts";
import { lstat } from "./private-files.ts";

const C = fs.constants;
const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;
/** O_NONBLOCK: opening a FIFO for reading would wait for a writer; it opens at once and is refused by its type. */
const FILE_FLAGS = C.O_NOFOLLOW | C.O_NONBLOCK | C.O_NOCTTY;
const MAX_DEPTH = 256;

const uid = typeof process.getuid === "function" ? process.getuid() : null;
const ours = (st: fs.Stats) => uid === null || st.uid === uid;
let procFd: boolean | null = null;
const haveProcFd = () => (procFd ??= fs.existsSync("/proc/self/fd"));

const kindOf = (st: fs.Stats): NodeInfo["kind"] =>
  st.isSymbolicLink() ? "link" : st.isFile() ? "file" : st.isDirectory() ? "dir" : "other";

function tryClose(fd: number | null): void {
  if (fd === null) return;
  try {
    fs.closeSync(fd);
  } catch {
    // closed already
  }
}

/** A folder held open (its fd, Linux) or known by a checked path (elsewhere); `at(name)` names an entry in it. */
type Held = { fd: number | null; path: string; at(name: string): string; close(): void };

const validName = (n: string) => n !== "" && n !== "." && n !== ".." && !n.includes("/") && !n.includes("\0");

/** The root folder itself: the owner's own real path, opened (and checked to be a folder) without following it. */
function holdRoot(root: string): Held | null {
  if (!haveProcFd())
    return lstat(root)?.isDirectory() ? { fd: null, path: root, at: (n) => `${root}/${n}`, close() {} } : null;
  try {
    return heldFd(fs.openSync(root, DIR_FLAGS), root);
  } catch {
    return null;
  }
}

function heldFd(fd: number, path: string): Held {
  return { fd, path, at: (n) => `/proc/self/fd/${fd}/${n}`, close: () => tryClose(fd) };
}

/** The folder `name` inside a held one, refused when it is a link, not a folder, or not this user's. */
function openChild(dir: Held, name: string): Held | null {
  if (!validName(name)) return null;
  const path = `${dir.path}/${name}`;
  if (dir.fd === null) {
    const st = lstat(path);
    return st?.isDirectory() && ours(st) ? { fd: null, path, at: (n) => `${path}/${n}`, close() {} } : null;
  }
  let fd: number | null = null;
  try {
    fd = fs.openSync(dir.at(name), DIR_FLAGS);
    if (!ours(fs.fstatSync(fd))) throw new Error("not ours");
    return heldFd(fd, path);
  } catch {
    tryClose(fd);
    return null;
  }
}

/** The folder `parts` below `root`, walked one held folder at a time. */
function holdDir(root: string, parts: string[]): Held | null {
  if (parts.length > MAX_DEPTH) return null;
  let dir = holdRoot(root);
  for (const part of parts) {
    if (!dir) return null;
    const next = openChild(dir, part);
    dir.close();
    dir = next;
  }
  return dir;
}

const listing = (dir: Held) => (dir.fd === null ? dir.path : `/proc/self/fd/${dir.fd}`);

/** `p` split into the steps below `root`, or null when it is not below it. */
function stepsBelow(root: string, p: string): string[] | null {
  const r = root.endsWith("/") ? root.slice(0, -1) : root;
  if (!p.startsWith(`${r}/`)) return null;
  return p.slice(r.length + 1).split("/");
}

/** Runs fn on the entry `p` names inside its held folder; null when the way there is refused. */
function inParent<T>(root: string, p: string, fn: (dir: Held, name: string) => T): T | null {
  const steps = stepsBelow(root, p);
  if (!steps) return null;
  const name = steps.pop() as string;
  if (!validName(name)) return null;
  const dir = holdDir(root, steps);
  if (!dir) return null;
  try {
    return fn(dir, name);
  } finally {
    dir.close();
  }
}

/** A plain file of ours with one link, opened without following it; null otherwise. */
function openPlain(path: string, flags: number): number | null {
  let fd: number | null = null;
  try {
    fd = fs.openSync(path, flags | FILE_FLAGS);
    const st = fs.fstatSync(fd);
    if (!st.isFile() || !ours(st) || st.nlink !== 1) throw new Error("not a plain file of ours");
    return fd;
  } catch {
    tryClose(fd);
    return null;
  }
}

/** Removes an entry; a folder with its contents, each folder held open: a link inside is removed, never entered. */
function removeIn(dir: Held, name: string, depth: number): boolean {
  const st = lstat(dir.at(name));
  if (!st) return true;
  try {
    if (!st.isDirectory()) {
      fs.unlinkSync(dir.at(name));
      return true;
    }
    if (depth > MAX_DEPTH) return false;
    const sub = openChild(dir, name);
    if (!sub) return false;
    let ok = true;
    try {
      for (const e of fs.readdirSync(listing(sub))) ok = removeIn(sub, e, depth + 1) && ok;
    } finally {
      sub.close();
    }
    fs.rmdirSync(dir.at(name));
    return ok;
  } catch {
    return false;
  }
}

/** The no-follow file work of one folder tree (the Host's `within`). Paths are absolute, below `root`. */
export function within(root: string): FolderFs {
  return {
    info: (p) =>
      inParent(root, p, (dir, name) => {
        const st = lstat(dir.at(name));
        return st ? { kind: kindOf(st), ours: ours(st), size: st.size, links: st.nlink, mtimeMs: st.mtimeMs } : null;
      }),
    readText: (p, limit = 1 << 20) =>
      inParent(root, p, (dir, name) => {
        const fd = openPlain(dir.at(name), C.O_RDONLY);
        if (fd === null) return null;
        try {
          const buf = Buffer.alloc(limit);
          const n = fs.readSync(fd, buf, 0, limit, 0);
          return buf.subarray(0, n).toString("utf8");
        } catch {
          return null;
        } finally {
          tryClose(fd);
        }
      }),
    writeText: (p, text) =>
      inParent(root, p, (dir, name) => {
        const fd = openPlain(dir.at(name), C.O_WRONLY);
        if (fd === null) return false;
        try {
          fs.ftruncateSync(fd, 0);
          fs.writeSync(fd, text, 0, "utf8");
          return true;
        } catch {
          return false;
        } finally {
          tryClose(fd);
        }
      }) ?? false,
    list: (p) => {
      const steps = p === root ? [] : stepsBelow(root, p);
      const dir = steps && holdDir(root, steps);
      if (!dir) return [];
      try {
        return fs.readdirSync(listing(dir), { withFileTypes: true }).map(
          (d): DirEntry => ({
            name: d.name,
            isFile: d.isFile(),
            isDirectory: d.isDirectory(),
            isSymlink: d.isSymbolicLink(),
          }),
        );
      } catch {
        return [];
      } finally {
        dir.close();
      }
    },
    remove: (p) => inParent(root, p, (dir, name) => removeIn(dir, name, 0)) ?? false,
    rename: (from, to) => {
      const a = stepsBelow(root, from);
      const b = stepsBelow(root, to);
      // Within one folder (a quarantine's `NAME.quarantined`): one folder held for both names.
      if (!a || !b || a.length !== b.length || a.slice(0, -1).join("/") !== b.slice(0, -1).join("/")) return false;
      const toName = b[b.length - 1];
      if (!validName(toName)) return false;
      return (
        inParent(root, from, (dir, name) => {
          if (lstat(dir.at(toName))) return false;
          try {
            fs.renameSync(dir.at(name), dir.at(toName));
            return true;
          } catch {
            return false;
          }
        }) ?? false
      );
    },
  };
}
