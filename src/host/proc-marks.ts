// Finds the processes that carry a run's mark (core/run/process/marks.ts) by reading /proc/<pid>/environ, which the
// kernel lets us read for processes of our own uid (root: all). A process's environ is the one it was started
// with, so a mark set at its start stays readable whatever it does later. Without /proc (macOS) nothing is found:
// there the kill protocol's walk down the process tree is all there is.
import * as fs from "node:fs";
import type { MarkedProcess } from "../core/host.ts";
import { MARK_ENV } from "../core/run/process/marks.ts";
import { procState } from "./process-identity.ts";

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

/** Every live process (but this one) whose environment sets `name`, with that value. */
export function processesWithEnv(name: string): { pid: number; value: string; command: string }[] {
  let entries: string[];
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return [];
  }
  const key = Buffer.from(`${name}=`);
  const out: { pid: number; value: string; command: string }[] = [];
  for (const entry of entries) {
    const c = entry.charCodeAt(0);
    if (c < 48 || c > 57 || Number(entry) === process.pid) continue;
    let environ: Buffer;
    try {
      environ = fs.readFileSync(`/proc/${entry}/environ`);
    } catch {
      continue; // another user's process, or gone
    }
    const value = valueIn(environ, key);
    if (value) out.push({ pid: Number(entry), value, command: commandOf(entry) || "?" });
  }
  return out;
}

/** Runnable or in an uninterruptible wait (state R or D): not waiting on anything. */
function busy(pid: number): boolean {
  const state = procState(pid);
  return state === "R" || state === "D";
}

/** Every live process (but this one) that carries a mark. */
export function markedProcesses(): MarkedProcess[] {
  return processesWithEnv(MARK_ENV).map((p) => ({ pid: p.pid, mark: p.value, command: p.command, busy: busy(p.pid) }));
}
