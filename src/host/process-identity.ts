// Telling a live process from a dead one across processes: owner records, worktree records and supervisors store
// a PID with its start time, so a PID the kernel handed to another process is not taken for theirs.
import * as fs from "node:fs";

/** The kernel's start time of a PID (clock ticks since boot), or null where the system does not tell. */
export function procStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22; the command name (field 2) may hold spaces and parentheses, so count from the last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** A process that has exited but was not yet reaped by its parent (a detached process's parent may be an init that
 *  reaps late, a container may have no init at all): signal 0 still reaches it, yet it does nothing any more. */
export function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}

/** Signal 0 reaches the PID (EPERM: it exists, another user's). A zombie still counts: see processRuns. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}

/** The process still runs: it exists and is not a zombie (what the hosts' isAlive and the kill protocol ask). */
export const processRuns = (pid: number): boolean => pidAlive(pid) && !isZombie(pid);

/** Sends a signal; a process already gone is no error. */
export function signalPid(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone
  }
}

/** A record of a process (its PID and start time) still names that process: alive, and not a recycled PID. */
export function recordAlive(r: { pid: number; startTime: string | null }): boolean {
  if (!pidAlive(r.pid)) return false;
  if (r.startTime === null) return true;
  const now = procStartTime(r.pid);
  return now === null || now === r.startTime;
}
