// The markers in a compiled pi's folder (src/host/compiled-pi.ts) and what they say together: ready, being compiled
// (a lock naming a live process), failed (why, when, by which build; final only for a bundle our hooks do not fit),
// or not yet compiled. Read by the run that may start a compile, by `doctor`/`--version --verbose`, and by `prune`.
import * as fs from "node:fs";
import * as path from "node:path";
import { writeFileAtomic } from "./atomic-write.ts";
import { isZombie, pidAlive, procStartTime, recordAlive } from "./process-identity.ts";

/** The compiled executable inside the folder. */
export const COMPILED_EXE = "pi";
export const READY = "ready";
export const FAILED = "failed";
export const LOCK = "compiling";
/** Which pi package and which `subagents` binary the folder was compiled for (`prune` keeps it while both are there). */
export const SOURCE = "source.json";
/** The compile process's own stdout/stderr: what a crash (no `failed` record) said last. */
export const LOG = "compile.log";
/** The compile's scratch folders start with this, then the compiling process's pid. */
export const WORK_PREFIX = ".build-";

/** Where the system cannot tell a process's start time (no /proc), a live PID holding a lock this long may be a
 *  recycled one: the lock counts as stale. A compile takes seconds to a minute. */
export const LOCK_MAX_AGE_MS = 30 * 60_000;
/** An unreadable lock (written by hand, or by a future format) is believed this long, then counts as stale. */
const UNREADABLE_LOCK_MS = 60_000;
/** After this many compiles in a row that ended with no result (killed), the next one waits like a failure. */
export const MAX_INTERRUPTED = 3;

export type CompileLock = { pid: number; startTime: string | null; at: number; tries: number };
export type CompileFailure = {
  at: number;
  reason: string;
  /** `subagents <version> · commit <sha>`: the build that tried. */
  build: string;
  /** The bundle does not have what our hooks need: not retried for this pi and build. */
  final: boolean;
  /** Failed compiles in a row; the wait before the next grows with it. */
  attempts: number;
};

export type CompileState =
  | { kind: "ready"; exe: string }
  | { kind: "compiling"; lock: CompileLock }
  | { kind: "failed"; failure: CompileFailure; retryAt: number | null }
  | { kind: "pending"; interrupted?: CompileLock };

/** The wait after `attempts` failed compiles in a row: 1 min, 2, 4, … at most an hour. Short, so a passing cause (a
 *  full disk, a removed temp folder) costs little, yet a pi that always fails is not compiled on every run. */
export function retryDelayMs(attempts: number): number {
  return Math.min(60_000 * 2 ** Math.max(0, attempts - 1), 60 * 60_000);
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

export function readLock(dir: string): CompileLock | null {
  const file = path.join(dir, LOCK);
  const text = readText(file);
  if (text === null) return null;
  const mtime = fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  try {
    const v = JSON.parse(text) as Partial<CompileLock>;
    if (typeof v.pid === "number")
      return { pid: v.pid, startTime: v.startTime ?? null, at: v.at ?? mtime, tries: v.tries ?? 1 };
  } catch {
    // older builds wrote the bare pid
  }
  const pid = Number(text.trim());
  return { pid: Number.isInteger(pid) && pid > 0 ? pid : 0, startTime: null, at: mtime, tries: 1 };
}

/** The lock's process is still the one compiling: alive and (where /proc tells) not a recycled PID. */
export function lockAlive(lock: CompileLock, now = Date.now()): boolean {
  if (!lock.pid) return now - lock.at < UNREADABLE_LOCK_MS;
  if (lock.startTime === null) return pidAlive(lock.pid) && now - lock.at < LOCK_MAX_AGE_MS;
  return recordAlive(lock) && !isZombie(lock.pid);
}

/** A lock for `pid` (its start time read now): written whole, so a concurrent reader never sees half of it. */
export function lockFor(pid: number, tries: number): CompileLock {
  return { pid, startTime: procStartTime(pid), at: Date.now(), tries };
}

export function writeLock(dir: string, lock: CompileLock): void {
  writeFileAtomic(path.join(dir, LOCK), `${JSON.stringify(lock)}\n`);
}

/** Creates the lock only if there is none (link(2) fails when the name exists): one of two racing runs wins. */
export function createLock(dir: string, lock: CompileLock): boolean {
  const tmp = path.join(dir, `${LOCK}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, `${JSON.stringify(lock)}\n`);
  try {
    fs.linkSync(tmp, path.join(dir, LOCK));
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === "EEXIST") return false;
    throw err;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

export function readFailure(dir: string): CompileFailure | null {
  const file = path.join(dir, FAILED);
  const text = readText(file);
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as Partial<CompileFailure>;
    if (typeof v.reason === "string" && typeof v.at === "number")
      return { at: v.at, reason: v.reason, build: v.build ?? "", final: !!v.final, attempts: v.attempts ?? 1 };
  } catch {
    // older builds wrote the bare message and never retried: such a marker is retried now
  }
  const mtime = fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  return { at: mtime, reason: text.trim(), build: "", final: false, attempts: 1 };
}

export function writeFailure(dir: string, failure: CompileFailure): void {
  writeFileAtomic(path.join(dir, FAILED), `${JSON.stringify(failure, null, 2)}\n`);
}

/** The last lines of a text (an error, a log): enough to say why, never the whole of a long build log. */
export function tail(text: string, lines = 12, chars = 2000): string {
  const kept = text.trimEnd().split("\n").slice(-lines).join("\n");
  return kept.length > chars ? `…${kept.slice(-chars)}` : kept;
}

export function compileState(dir: string, now = Date.now()): CompileState {
  if (fs.existsSync(path.join(dir, READY))) return { kind: "ready", exe: path.join(dir, COMPILED_EXE) };
  const lock = readLock(dir);
  if (lock && lockAlive(lock, now)) return { kind: "compiling", lock };
  const failure = readFailure(dir);
  if (failure)
    return { kind: "failed", failure, retryAt: failure.final ? null : failure.at + retryDelayMs(failure.attempts) };
  return lock ? { kind: "pending", interrupted: lock } : { kind: "pending" };
}

export type CompileSource = { pkgDir: string; binary: string; piVersion: string };

export function readSource(dir: string): CompileSource | null {
  try {
    const v = JSON.parse(readText(path.join(dir, SOURCE)) ?? "") as Partial<CompileSource>;
    return v.pkgDir && v.binary ? { pkgDir: v.pkgDir, binary: v.binary, piVersion: v.piVersion ?? "" } : null;
  } catch {
    return null;
  }
}

export function writeSource(dir: string, source: CompileSource): void {
  writeFileAtomic(path.join(dir, SOURCE), `${JSON.stringify(source, null, 2)}\n`);
}
