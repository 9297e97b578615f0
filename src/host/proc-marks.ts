// Finds the processes that carry a run's mark (core/run/process/marks.ts) by reading /proc/<pid>/environ, which the
// kernel lets us read for processes of our own uid (root: all). A process's environ is the one it was started
// with, so a mark set at its start stays readable whatever it does later. Without /proc (macOS) nothing is found:
// there the kill protocol's walk down the process tree is all there is.
import * as fs from "node:fs";
import type { MarkedProcess } from "../core/host.ts";
import { MARK_ENV, within } from "../core/run/process/marks.ts";
import { procState } from "./process-identity.ts";
import { childrenFromTasks } from "./proc-tree.ts";

const COMMAND_CHARS = 200;

/** The value of `key` (`NAME=` as bytes) in one environ block (NUL-separated NAME=value entries), or null. */
function valueIn(environ: Buffer, key: Buffer): string | null {
  let at = 0;
  for (;;) {
    const i = environ.indexOf(key, at);
    if (i < 0) return null;
    if (i === 0 || environ[i - 1] === 0) {
      const end = environ.indexOf(0, i);
      return environ.toString("utf8", i + key.length, end < 0 ? environ.length : end);
    }
    at = i + 1;
  }
}

function commandOf(pid: string): string {
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0+$/, "").replace(/\0/g, " ").trim();
    return cmd.length > COMMAND_CHARS ? `${cmd.slice(0, COMMAND_CHARS)}…` : cmd;
  } catch {
    return "";
  }
}

/**
 * Processes known to carry no mark, by their /proc entry's inode number. A run's end looks for its mark in every
 * process's environment, and a batch's owner ends thousands of runs: reading every environ each time was most of
 * what that cost. A process's environ is the one it was started with; a process without a mark is remembered
 * as such, and only a new process (a new PID, or a new inode under an old one: the kernel makes a /proc/<pid> inode
 * for each process, numbered from a counter it does not reuse) is read. Processes with a mark are read every time.
 * Remembering "no mark" cannot hide a run's process: a process gets a mark only from whoever starts it, so it has
 * one from its start, with one exception — a child caught between its fork and its exec still shows its parent's
 * environment. Everything a run starts is started by a marked process (whose children show its mark even then);
 * a parent without a mark that starts a marked child is an owner, and this process's own children are never
 * remembered (another owner's are its own to end: the kill protocol walks its tree, and its children watch it).
 */
let unmarked = new Map<string, number>();

/** The value of `name` in a process's environment (null: not set, or not readable now); `final`: what it says will
 *  not change (it was read, or the process is a kernel thread or a zombie, which never get one). Another user's
 *  process may become readable (a setuid program dropping its privileges): not final. */
function readValue(entry: string, key: Buffer): { value: string | null; final: boolean } {
  try {
    return { value: valueIn(fs.readFileSync(`/proc/${entry}/environ`), key), final: true };
  } catch (err) {
    return { value: null, final: (err as { code?: string }).code === "ESRCH" };
  }
}

function* pidEntries(): Generator<string> {
  let entries: string[];
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return;
  }
  for (const entry of entries) {
    const c = entry.charCodeAt(0);
    if (c >= 48 && c <= 57 && Number(entry) !== process.pid) yield entry;
  }
}

/** Every live process (but this one) whose environment sets `name`, with that value. */
export function processesWithEnv(name: string): { pid: number; value: string; command: string }[] {
  const key = Buffer.from(`${name}=`);
  const out: { pid: number; value: string; command: string }[] = [];
  for (const entry of pidEntries()) {
    const { value } = readValue(entry, key);
    if (value) out.push({ pid: Number(entry), value, command: commandOf(entry) || "?" });
  }
  return out;
}

/** The processes carrying a mark `keep` takes, with it (the others' command lines are not read). */
function processesWithMark(keep: (mark: string) => boolean): { pid: number; value: string; command: string }[] {
  const key = Buffer.from(`${MARK_ENV}=`);
  const out: { pid: number; value: string; command: string }[] = [];
  const now = new Map<string, number>();
  // This process's children may be between fork and exec (not where it is unknown: then nothing is remembered).
  const own = childrenFromTasks(process.pid);
  const mine = new Set(own?.map(String));
  for (const entry of pidEntries()) {
    let ino: number;
    try {
      ino = fs.statSync(`/proc/${entry}`).ino;
    } catch {
      continue; // gone
    }
    if (unmarked.get(entry) === ino) {
      now.set(entry, ino);
      continue;
    }
    const { value, final } = readValue(entry, key);
    if (value === null) {
      if (final && own && !mine.has(entry)) now.set(entry, ino);
      continue;
    }
    if (keep(value)) out.push({ pid: Number(entry), value, command: commandOf(entry) || "?" });
  }
  // What is no longer listed is gone: only live processes are remembered.
  unmarked = now;
  return out;
}

/** Runnable or in an uninterruptible wait (state R or D): not waiting on anything. */
function busy(pid: number): boolean {
  const state = procState(pid);
  return state === "R" || state === "D";
}

/** Every live process (but this one) that carries a mark (one `keep` takes: only theirs are read further). */
export function markedProcesses(keep: (mark: string) => boolean = () => true): MarkedProcess[] {
  return processesWithMark(keep).map((p) => ({ pid: p.pid, mark: p.value, command: p.command, busy: busy(p.pid) }));
}

/** The processes carrying `run`'s mark or one under it (its sub-agents'): Host.marked. */
export const markedUnder = (run?: string): MarkedProcess[] =>
  markedProcesses(run === undefined ? undefined : (mark) => within(mark, run));
