// A child whose owner is gone (killed with SIGKILL, or its fd 3 broken): nobody else will end what this child's
// commands left running, so the child does — with the runner's own kill protocol (SIGTERM, the grace period,
// SIGKILL: core/run/process/leftovers.ts) — before it stops itself.
import { realClock } from "../core/host.ts";
import { endProcesses } from "../core/run/process/leftovers.ts";
import { keeps, MARK_ENV, within } from "../core/run/process/marks.ts";
import { markedProcesses } from "../host/proc-marks.ts";
import { pidAlive, processRuns, signalPid } from "../host/process-identity.ts";
import { descendantsOf } from "../host/proc-tree.ts";

/** A kept child (core/run/process/pool.ts) loads this extension again for each task's session (under jiti perhaps as
 *  a new module): one watch per process. */
const WATCHING = Symbol.for("subagents.watching-parent");

/** The mark this process was started with (marks.ts): a kept child changes its process.env's copy per session. */
const PROCESS_MARK = Symbol.for("subagents.process-mark");
export const processMark = (): string | undefined => {
  const g = globalThis as { [PROCESS_MARK]?: string };
  g[PROCESS_MARK] ??= process.env[MARK_ENV] ?? "";
  return g[PROCESS_MARK] || undefined;
};

/** What this child's commands left running: the processes carrying its mark (none when it keeps them). */
function leftovers(): ReturnType<typeof markedProcesses> {
  const mark = processMark();
  if (!mark || keeps(mark)) return [];
  return markedProcesses((m) => within(m, mark));
}

const parentPid = (): number | null => {
  const parent = Number(process.env.PI_SUBAGENT_PARENT_PID);
  return Number.isInteger(parent) && parent > 1 ? parent : null;
};

/** Whether the owner that started this child still runs (and is still our parent). */
const ownerAlive = (parent: number) => pidAlive(parent) && process.ppid === parent;

/**
 * The last chance, whatever ends this process (a crash included): with the owner gone, what our commands left gets
 * SIGKILL now (an exit handler cannot wait out a grace period).
 */
function endLeftoversAtExit(parent: number): void {
  process.once("exit", () => {
    if (ownerAlive(parent)) return;
    for (const p of leftovers()) signalPid(p.pid, "SIGKILL");
  });
}

/** Once the owner is gone (noticed by the watch, or by a broken fd 3): end what our commands left, then stop. */
export function ownerGoneThen(stop: () => void): () => void {
  let ending = false;
  return () => {
    if (ending) return;
    ending = true;
    const host = { descendants: descendantsOf, signal: signalPid, isAlive: processRuns };
    void endProcesses(host, realClock, leftovers()).finally(stop);
  };
}

/** Looks at the owner once a second; the first time it is gone, `ownerGone` runs. */
export function watchParent(ownerGone: () => void): void {
  const g = globalThis as { [WATCHING]?: boolean };
  if (g[WATCHING]) return;
  g[WATCHING] = true;
  const parent = parentPid();
  if (parent === null) return;
  endLeftoversAtExit(parent);
  const timer = setInterval(() => {
    if (ownerAlive(parent)) return;
    clearInterval(timer);
    ownerGone();
  }, 1000);
  timer.unref?.();
}
