// The kill protocol (docs/limits.md "How a sub-agent runs"): SIGTERM first — pi then kills the bash process groups it started — wait for
// the real exit up to a grace period, then SIGKILL the child and every process that descended from it.
// The descendant list is taken before signalling because orphans are re-parented and can no longer be found.
import type { ChildProcess, Clock, ExitInfo, Host } from "../../host.ts";

export const TERM_GRACE_MS = 5000;

export function waitFor<T>(clock: Clock, p: Promise<T>, ms: number): Promise<T | "timeout"> {
  return new Promise((resolve) => {
    const handle = clock.setTimeout(() => resolve("timeout"), ms);
    p.then((v) => {
      clock.clearTimeout(handle);
      resolve(v);
    });
  });
}

/** Kills whatever is left of a process tree whose root has already exited (or was just killed). */
export function reapDescendants(host: Host, pids: number[]): void {
  for (const pid of pids) if (host.isAlive(pid)) host.signal(pid, "SIGKILL");
}

export async function killTree(
  host: Host,
  clock: Clock,
  proc: ChildProcess,
  graceMs = TERM_GRACE_MS,
  termTree = false,
): Promise<ExitInfo> {
  const tree = host.descendants(proc.pid);
  proc.kill("SIGTERM");
  // pi passes SIGTERM on to what it started; a CLI that does not (a wrapper around a native binary) gets its
  // whole tree told at once, so each part can end cleanly before the SIGKILL.
  if (termTree) for (const pid of tree) if (host.isAlive(pid)) host.signal(pid, "SIGTERM");
  let exit = await waitFor(clock, proc.exited, graceMs);
  if (exit === "timeout") {
    const late = host.descendants(proc.pid);
    proc.kill("SIGKILL");
    reapDescendants(host, late);
    exit = await proc.exited;
  }
  reapDescendants(host, tree);
  return exit;
}
