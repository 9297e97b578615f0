// What a dead owner's task left running in its worktree — a setup command, a gate, a child that has not yet noticed
// its owner is gone, the `git worktree add` it had started — is ended before the clean-up removes the worktree from
// under it: the processes carrying a mark of that owner's run of the session (core/run/process/marks.ts), any of our
// marked processes working inside the worktree, and the programs the owner itself ran (git-command.ts RUN_BY_ENV). A
// process of the user's own (no mark) is never touched.
import * as fs from "node:fs";
import { realClock } from "../core/host.ts";
import { endProcesses } from "../core/run/process/leftovers.ts";
import { ofOwnerSession } from "../core/run/process/marks.ts";
import { markedProcesses, processesWithEnv } from "./proc-marks.ts";
import { RUN_BY_ENV } from "./git-command.ts";
import { processRuns, signalPid } from "./process-identity.ts";
import { descendantsOf } from "./proc-tree.ts";

/** Between SIGTERM and SIGKILL: the clean-up waits at most this long for them. */
const ORPHAN_GRACE_MS = 2000;

const inside = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);

function cwdOf(pid: number): string | null {
  try {
    return fs.readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

/** Ends (SIGTERM, the grace, SIGKILL) what the dead `owner` left of session `sessionId`, or left working in `dir`. */
export async function endOrphans(
  owner: { pid: number; startTime: string | null },
  sessionId: string,
  dir: string,
): Promise<number> {
  const tag = `${owner.pid}.${owner.startTime ?? 0}`;
  const found = markedProcesses().filter((p) => {
    if (ofOwnerSession(p.mark, owner.pid, sessionId)) return true;
    const cwd = cwdOf(p.pid);
    return cwd !== null && inside(cwd, dir);
  });
  for (const p of processesWithEnv(RUN_BY_ENV))
    if (p.value === tag && !found.some((f) => f.pid === p.pid))
      found.push({ pid: p.pid, mark: "", command: p.command, busy: false });
  if (!found.length) return 0;
  const host = { descendants: descendantsOf, signal: signalPid, isAlive: processRuns };
  await endProcesses(host, realClock, found, ORPHAN_GRACE_MS);
  return found.length;
}
