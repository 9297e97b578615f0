// Telling a live process from a dead one across processes: owner records, worktree records and supervisors store
// a PID with its start time, so a PID the kernel handed to another process is not taken for theirs.
import * as fs from "node:fs";

/** The fields of /proc/<pid>/stat after the command name (field 3, the state, first), or null where the system does
 *  not tell. The command name (field 2) may hold spaces and parentheses, so the fields are counted from the last ')'. */
export function procStatFields(pid: number): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** The kernel's start time of a PID (clock ticks since boot, field 22), or null where the system does not tell. */
export function procStartTime(pid: number): string | null {
  return procStatFields(pid)?.[19] ?? null;
}

/** The process's state letter (field 3: R running, S sleeping, D uninterruptible, Z zombie, …), or null. */
export function procState(pid: number): string | null {
  return procStatFields(pid)?.[0] ?? null;
}

/** A process that has exited but was not yet reaped by its parent (a detached process's parent may be an init that
 *  reaps late, a container may have no init at all): signal 0 still reaches it, yet it does nothing any more. */
export const isZombie = (pid: number): boolean => procState(pid) === "Z";

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

/** This process as part of a file name, `<pid>.<start time>` (0 where the system does not tell): what it leaves
 *  behind is known as its, and a later process given the same PID is not taken for it. */
export const ownTag = (): string => `${process.pid}.${procStartTime(process.pid) ?? 0}`;

/** Whether the process a name's tag names (ownTag's two parts) still runs. */
export const tagAlive = (pid: string, start: string): boolean =>
  recordAlive({ pid: Number(pid), startTime: start === "0" ? null : start });
