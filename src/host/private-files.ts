// Owner-only records (docs/settings.md "Where data lives"): what subagents keeps — the store and its -wal/-shm
// files, owner records and control sockets, logs, schedules, session folders, worktree records, its caches and
// temp folders — can be read by the user who owns it and nobody else: 0600 files, 0700 folders, whatever the umask.
// New ones are made so; what an older version left (0644 files in 0755 folders) is fixed the first time it is used.
// Only what is ours is touched: never a symlink (chmod would follow it), never another user's file.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const PRIVATE_FILE = 0o600;
export const PRIVATE_DIR = 0o700;

const uid = () => (typeof process.getuid === "function" ? process.getuid() : null);

/** The path itself (a link as a link), or null when it is not there or cannot be looked at. */
export function lstat(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

/** The mode owner-only: folders and executables 0700, other files 0600. */
const privateMode = (st: fs.Stats) => (st.isDirectory() || st.mode & 0o100 ? PRIVATE_DIR : PRIVATE_FILE);

/** Makes one existing path of ours owner-only; false when it is not there, not ours or a symlink. Never throws. */
export function makePrivate(p: string): boolean {
  const st = lstat(p);
  if (!st || st.isSymbolicLink() || (uid() !== null && st.uid !== uid())) return false;
  if ((st.mode & 0o777) === privateMode(st)) return true;
  try {
    fs.chmodSync(p, privateMode(st));
    return true;
  } catch {
    return false;
  }
}

/** mkdir -p where every folder made is 0700, and the last one made owner-only if it is ours. Returns `dir`. */
export function privateDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  makePrivate(dir);
  return dir;
}

/**
 * Our cache folder (`<cache>/subagents`), made and checked before anything in it is used: ours and owner-only, else
 * an error (then the next place is tried). Under the shared temp folder its name carries our uid and it may not be a
 * symlink, so another user can neither pre-create it nor point it elsewhere and have us run what they put there.
 */
export function cacheRoot(base: string): string {
  const dir = cacheRootPath(base);
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  if (!ourCacheRoot(dir))
    throw new Error(`${dir} is not a private folder of this user (another user's, or open to others): not used`);
  return dir;
}

/** Whether `dir` (a cacheRootPath) is ours and owner-only — made so when it is ours but open (an older install).
 *  Under the shared temp folder it may not be a symlink. */
export function ourCacheRoot(dir: string): boolean {
  const shared = path.basename(dir) !== "subagents";
  const st = (shared ? lstat : statOf)(dir);
  if (!st?.isDirectory() || (uid() !== null && st.uid !== uid())) return false;
  if ((st.mode & 0o077) === 0) return true;
  return makePrivate(shared ? dir : fs.realpathSync(dir)) && ((statOf(dir)?.mode ?? 0o777) & 0o077) === 0;
}

const isTempBase = (base: string) => path.resolve(base) === path.resolve(os.tmpdir());

/** Where cacheRoot puts our cache under `base` (nothing is made). */
export const cacheRootPath = (base: string) =>
  path.join(base, isTempBase(base) ? `subagents-${uid() ?? "u"}` : "subagents");

/** The bases a cache of ours may go under, best first: XDG cache, ~/.cache, the temp folder (an unwritable home). */
export function cacheBases(env: Record<string, string | undefined>): string[] {
  const home = env.HOME || os.homedir();
  return [env.XDG_CACHE_HOME, home ? path.join(home, ".cache") : undefined, os.tmpdir()].filter(
    (b): b is string => !!b && path.isAbsolute(b),
  );
}

function statOf(p: string): fs.Stats | null {
  try {
    return fs.statSync(p);
  } catch {
    return null;
  }
}

/**
 * A folder of ours and what is in it, owner-only. Cheap once done: a folder already 0700 is taken as fixed (we
 * make ours so), so an install is walked once, the first time this version uses it.
 */
export function privateTree(dir: string, depth = 6): void {
  const st = lstat(dir);
  if (!st?.isDirectory() || (st.mode & 0o777) === PRIVATE_DIR) return;
  walk(dir, depth);
}

function walk(dir: string, depth: number): void {
  // The contents first: a folder made 0700 before them would be taken as done if this stops half-way.
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    // not ours to read
  }
  for (const n of names) {
    const p = path.join(dir, n);
    const st = lstat(p);
    if (!st || st.isSymbolicLink()) continue;
    if (st.isDirectory() && depth > 0) walk(p, depth - 1);
    else makePrivate(p);
  }
  makePrivate(dir);
}

/**
 * The session database, made 0600 before SQLite opens it: SQLite creates the database 0644 and gives its -wal and
 * -shm files the database file's mode. An existing database and its files from an older version are fixed.
 */
export function privateDbFile(file: string): void {
  if (!path.isAbsolute(file)) return; // ":memory:" and the like
  try {
    fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_WRONLY | fs.constants.O_APPEND, PRIVATE_FILE));
  } catch {
    return; // SQLite says why when it opens it
  }
  for (const suffix of ["", "-wal", "-shm", "-journal"]) makePrivate(`${file}${suffix}`);
}

/** What subagents keeps beside the store and in pi's agent dir, fixed once for installs made by older versions. */
export function privateRecords(agentDir: string, dataDir: string): void {
  for (const d of ["control", "logs", "worktrees"]) privateTree(path.join(dataDir, d), 0);
  // A worktree's own files are the user's project: only the folder holding them is ours to close.
  for (const d of ["subagent-sessions", "schedules", "subagents-runtime"]) privateTree(path.join(agentDir, d));
}
