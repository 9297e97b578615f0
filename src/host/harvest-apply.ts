// A sandboxed task's changes written into the user's folder by its owner (docs/sandbox-runners.md "What comes
// back"): what the harvest took from the task's layer or copy (harvest.ts) — files' content, folders, links inside,
// deletions — and nothing else. The owner follows no link on the way: every path is walked from the folder's real
// path one folder at a time, each opened without following a link (O_NOFOLLOW | O_DIRECTORY) and held, the last
// step done inside the held folder (/proc/self/fd/N/NAME: openat's path form); a file is written to a new name
// beside it and renamed over the old one, never written through. Names are bytes. A change whose file the user (or
// another task) changed while the task ran — its change time is at or after the task's start — is not applied: it is
// a conflict, the task's version kept in a folder of the owner's and named.
import * as fs from "node:fs";
import { leftBehind, leftWarnings, type LeftWhy, type RuleOpts, shown } from "../core/run/launch/harvest-rules.ts";
import { listed } from "../core/string-list.ts";
import { abs, type Harvest } from "./harvest.ts";

const C = fs.constants;
const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;
const SLASH = 0x2f;

type Left = { path: Buffer; why: LeftWhy };

export type Applied = {
  /** Entries written or removed. */
  applied: number;
  /** Paths not applied because they changed in the user's folder while the task ran. */
  conflicts: string[];
  /** Paths not applied because the way there is not a plain folder (a link, a file) in the user's folder. */
  refused: string[];
  /** Where the task's versions of the conflicting files are kept. */
  keptAt?: string;
  /** What a deleted folder held that stays (git data, protected names). */
  left: Left[];
};

/** A folder held open: entries are named through /proc/self/fd (Linux), so the path cannot be swapped under us. */
type Held = { fd: number; at(name: Buffer): Buffer; close(): void };

function hold(fd: number): Held {
  const prefix = Buffer.from(`/proc/self/fd/${fd}/`);
  return {
    fd,
    at: (name) => Buffer.concat([prefix, name]),
    close: () => {
      try {
        fs.closeSync(fd);
      } catch {
        // closed already
      }
    },
  };
}

const parts = (p: Buffer): Buffer[] => {
  const out: Buffer[] = [];
  let start = 0;
  for (let i = 0; i <= p.length; i++)
    if (i === p.length || p[i] === SLASH) {
      if (i > start) out.push(p.subarray(start, i));
      start = i + 1;
    }
  return out;
};

const lstatAt = (p: Buffer): fs.BigIntStats | null => {
  try {
    return fs.lstatSync(p, { bigint: true, throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
};

/** Folders of the user's held open while a harvest is written: each walked once from the root, without following
 *  a link, then reused by the entries in it (a thousand files in a few folders are a few walks). */
class Folders {
  private held = new Map<string, Held>();
  constructor(private root: string) {}

  /** The folder `steps` below the root; missing ones made when `make`. Null when a step is not a plain folder. */
  private folder(steps: Buffer[], make: boolean): Held | null {
    const key = Buffer.concat(steps.flatMap((s) => [s, Buffer.from([0])])).toString("latin1");
    const known = this.held.get(key);
    if (known) return known;
    let dir: Held;
    if (!steps.length) {
      try {
        dir = hold(fs.openSync(this.root, DIR_FLAGS));
      } catch {
        return null;
      }
    } else {
      const parent = this.folder(steps.slice(0, -1), make);
      if (!parent) return null;
      const step = steps[steps.length - 1];
      let fd: number | null = null;
      try {
        fd = fs.openSync(parent.at(step), DIR_FLAGS);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT" || !make) return null;
        try {
          fs.mkdirSync(parent.at(step), 0o755);
          fd = fs.openSync(parent.at(step), DIR_FLAGS);
        } catch {
          return null;
        }
      }
      dir = hold(fd);
    }
    // Bounded: past this many open folders, the ones held so far are let go (walked again if needed).
    if (this.held.size >= 512) this.close();
    this.held.set(key, dir);
    return dir;
  }

  /** The folder holding `rel`, and the last name. */
  parentOf(rel: Buffer, make: boolean): { dir: Held; name: Buffer } | null {
    const steps = parts(rel);
    const name = steps.pop();
    if (!name) return null;
    const dir = this.folder(steps, make);
    return dir ? { dir, name } : null;
  }

  /** A folder was removed or replaced: what was held below it is let go. */
  forget(): void {
    this.close();
  }

  close(): void {
    for (const h of this.held.values()) h.close();
    this.held.clear();
  }
}

/** Reads a file of the layer (or copy) without following a link; null when it is not a plain file there. */
function readPlain(p: Buffer): { data: Buffer; mode: number } | null {
  let fd: number | null = null;
  try {
    fd = fs.openSync(p, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return null;
    return { data: fs.readFileSync(fd), mode: st.mode & 0o777 };
  } catch {
    return null;
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

/** Whether anything under a folder of the user's changed at or after `since` (a folder's own entries included). */
function changedSince(p: Buffer, since: bigint): boolean {
  const st = lstatAt(p);
  if (!st) return false;
  if (st.ctimeNs >= since) return true;
  if (!st.isDirectory()) return false;
  let names: Buffer[];
  try {
    names = fs.readdirSync(p, { encoding: "buffer" }) as Buffer[];
  } catch {
    return true;
  }
  return names.some((n) => changedSince(Buffer.concat([p, Buffer.from("/"), n]), since));
}

/** Removes an entry of a held folder (`rel` its path in the user's folder); a folder with everything in it,
 *  following no link, but what the rules keep (a repository's git data inside it, protected names): those stay,
 *  and so does the folder holding them. */
function removeAt(dir: Held, name: Buffer, rel: Buffer, keep: (rel: Buffer) => LeftWhy | null, kept: Left[]): void {
  const why = keep(rel);
  if (why) {
    kept.push({ path: rel, why });
    return;
  }
  const st = lstatAt(dir.at(name));
  if (!st) return;
  if (!st.isDirectory()) {
    fs.unlinkSync(dir.at(name));
    return;
  }
  const sub = hold(fs.openSync(dir.at(name), DIR_FLAGS));
  try {
    for (const n of fs.readdirSync(sub.at(Buffer.alloc(0)), { encoding: "buffer" }) as Buffer[])
      removeAt(sub, n, Buffer.concat([rel, Buffer.from("/"), n]), keep, kept);
  } finally {
    sub.close();
  }
  try {
    fs.rmdirSync(dir.at(name));
  } catch {
    // it holds what stays
  }
}

let seq = 0;
const tempName = () => Buffer.from(`.subagents-${process.pid}-${seq++}.tmp`);

/** The mode a file gets at creation (the umask applies): set again only when it differs. */
const UMASK = typeof process.umask === "function" ? process.umask() : 0o022;

/** Writes a new file `name` in a held folder: O_EXCL, so nothing there (a link, a file) is ever written through. */
function createAt(dir: Held, name: Buffer, put: { data: Buffer; mode: number }): void {
  const fd = fs.openSync(dir.at(name), C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, put.mode);
  try {
    fs.writeSync(fd, put.data);
    if ((put.mode & ~UMASK) !== put.mode) fs.fchmodSync(fd, put.mode);
  } finally {
    fs.closeSync(fd);
  }
}

/** Puts `data` (or a link to `link`) in place of `name` in a held folder: a new entry renamed over the old one. */
function replaceAt(dir: Held, name: Buffer, put: { data: Buffer; mode: number } | { link: Buffer }): void {
  const tmp = tempName();
  if ("link" in put) fs.symlinkSync(put.link, dir.at(tmp));
  else createAt(dir, tmp, put);
  try {
    fs.renameSync(dir.at(tmp), dir.at(name));
  } catch (err) {
    fs.rmSync(dir.at(tmp), { force: true });
    throw err;
  }
}

/**
 * Writes the harvest into `root` (the user's folder, its real path). `since`: the task's start (task-layer.ts
 * startedNs); `keep`: a folder of the owner's for the task's versions of conflicting files.
 */
export function applyHarvest(h: Harvest, o: { root: string; since: bigint; keep: string; rules: RuleOpts }): Applied {
  const out: Applied = { applied: 0, conflicts: [], refused: [], left: [] };
  const keep = (rel: Buffer) => leftBehind(rel, { ...o.rules, scope: undefined });
  const conflict = (p: Buffer, content?: { data: Buffer; mode: number }) => {
    if (!out.conflicts.includes(shown(p))) out.conflicts.push(shown(p));
    if (!content) return;
    const to = Buffer.concat([Buffer.from(`${o.keep}/`), p]);
    fs.mkdirSync(to.subarray(0, to.lastIndexOf(SLASH)), { recursive: true, mode: 0o700 });
    fs.writeFileSync(to, content.data, { mode: content.mode & 0o700 });
    out.keptAt = o.keep;
  };
  const folders = new Folders(o.root);
  const inParent = (p: Buffer, make: boolean, fn: (dir: Held, name: Buffer) => void) => {
    const at = folders.parentOf(p, make);
    if (!at) {
      out.refused.push(shown(p));
      return;
    }
    fn(at.dir, at.name);
  };
  try {
    // What is gone first (a file may take a folder's place), unless it changed meanwhile.
    for (const g of h.gone)
      inParent(g.path, false, (dir, name) => {
        const st = lstatAt(dir.at(name));
        if (!st) return;
        if (changedSince(dir.at(name), o.since)) return conflict(g.path);
        removeAt(dir, name, g.path, keep, out.left);
        folders.forget();
        out.applied++;
      });
    for (const d of [...h.dirs].sort(Buffer.compare))
      inParent(d, true, (dir, name) => {
        try {
          fs.mkdirSync(dir.at(name), 0o755);
          out.applied++;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
          if (!lstatAt(dir.at(name))?.isDirectory()) conflict(d);
        }
      });
    for (const f of h.files) {
      const content = readPlain(abs(h.from, f));
      if (!content) {
        out.refused.push(shown(f));
        continue;
      }
      inParent(f, true, (dir, name) => {
        const st = lstatAt(dir.at(name));
        if (st?.isDirectory()) return conflict(f, content);
        if (st && st.ctimeNs >= o.since) {
          const same = st.isFile() && readPlain(dir.at(name))?.data.equals(content.data);
          if (!same) conflict(f, content);
          return;
        }
        // A new file is made in place (O_EXCL); one of yours is replaced whole, never written through.
        try {
          if (st) replaceAt(dir, name, content);
          else createAt(dir, name, content);
          out.applied++;
        } catch (err) {
          // Made by someone else since we looked: theirs stays.
          if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
          conflict(f, content);
        }
      });
    }
    for (const l of h.links)
      inParent(l.path, true, (dir, name) => {
        const st = lstatAt(dir.at(name));
        if (st?.isDirectory() || (st && st.ctimeNs >= o.since)) return conflict(l.path);
        replaceAt(dir, name, { link: l.target });
        out.applied++;
      });
  } finally {
    folders.close();
  }
  return out;
}

/** The task's warnings for what its owner did not write back, and why. */
export function inPlaceWarnings(h: Harvest, a: Applied): string[] {
  const out: string[] = [];
  const left = [...h.left, ...a.left];
  const topGit = (l: Left) => l.why === "git" && shown(l.path) === ".git";
  if (left.some(topGit))
    out.push(
      "sandbox: the child's git commits, refs and config stay behind (in its layer or copy): what it changed in your files is in your folder, not committed",
    );
  const named = left.filter((l) => !topGit(l)).map((l) => ({ path: shown(l.path), why: l.why }));
  out.push(...leftWarnings(named, "sandbox", (n) => listed(n, 5)));
  if (a.conflicts.length)
    out.push(
      `sandbox: not written back, changed in your folder while the task ran (by you or another task): ${listed(a.conflicts, 5)}${a.keptAt ? ` — the task's versions are in ${a.keptAt}` : ""}`,
    );
  if (a.refused.length)
    out.push(
      `sandbox: not written back, the way there in your folder is not a plain folder (a link, a file): ${listed(a.refused, 5)}`,
    );
  return out;
}
