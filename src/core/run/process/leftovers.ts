// What a run's commands left running (marks.ts): found by the run's mark once its child is gone (or its lease on
// a kept child is over), named in the run's record, and ended with the kill protocol — SIGTERM, the grace
// period, SIGKILL — unless the task keeps them on purpose (keepProcesses).
import type { Clock, Host } from "../../host.ts";
import { within, type MarkedProcess } from "./marks.ts";
import { TERM_GRACE_MS } from "./kill.ts";

const POLL_MS = 100;
/** Rounds of looking again after an end: a leftover may start another process while it is being ended. */
const ROUNDS = 3;
/** How long a run's end waits for its leftovers to stop being busy before it names them. */
const SETTLE_MS = 1000;

export const marksOf = (host: Host, run: string): MarkedProcess[] =>
  (host.marked?.(run) ?? []).filter((p) => within(p.mark, run));

const lookFor = (host: Host, run: string, spare?: (pid: number) => boolean) =>
  marksOf(host, run).filter((p) => !spare?.(p.pid));

/** The run's marked processes once none of them is busy (at most SETTLE_MS): a command line read while a process is
 *  between two execs names what it is about to stop being (`setsid sleep 9` a moment before it is `sleep 9`), and a
 *  loaded machine can hold a process there for a second. A process that stays busy (a CPU-bound leftover) is named
 *  as last seen. */
async function settledMarks(host: Host, clock: Clock, run: string, spare?: (pid: number) => boolean) {
  const look = () => lookFor(host, run, spare);
  let now = look();
  const until = clock.now() + SETTLE_MS;
  while (now.some((p) => p.busy) && clock.now() < until) {
    await new Promise((r) => clock.setTimeout(() => r(null), POLL_MS / 2));
    now = look();
  }
  return now;
}

/** SIGTERM to each (and what it started), up to the grace period for them to go, then SIGKILL to what is left. */
export async function endProcesses(
  host: Pick<Host, "descendants" | "signal" | "isAlive">,
  clock: Clock,
  procs: MarkedProcess[],
  graceMs = TERM_GRACE_MS,
): Promise<void> {
  const pids = [...new Set(procs.flatMap((p) => [p.pid, ...host.descendants(p.pid)]))];
  for (const pid of pids) host.signal(pid, "SIGTERM");
  const until = clock.now() + graceMs;
  while (pids.some((pid) => host.isAlive(pid)) && clock.now() < until)
    await new Promise((r) => clock.setTimeout(() => r(null), POLL_MS));
  const late = pids.filter((pid) => host.isAlive(pid));
  for (const pid of [...late, ...late.flatMap((pid) => host.descendants(pid))]) host.signal(pid, "SIGKILL");
}

/** Ends every process carrying the run's mark; returns what was found (all of it kept alive when `keep`). */
export async function endLeftovers(
  host: Host,
  clock: Clock,
  run: string,
  opts: { keep?: boolean; graceMs?: number; spare?: (pid: number) => boolean } = {},
): Promise<MarkedProcess[]> {
  const found: MarkedProcess[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Only the first look waits for busy processes: a CPU-bound leftover delays the run's end once, not per round.
    const now = round === 0 ? await settledMarks(host, clock, run, opts.spare) : lookFor(host, run, opts.spare);
    found.push(...now.filter((p) => !found.some((f) => f.pid === p.pid)));
    if (opts.keep || !now.length) break;
    await endProcesses(host, clock, now, opts.graceMs);
  }
  return found;
}

const listed = (procs: MarkedProcess[]) => procs.map((p) => `pid ${p.pid} \`${p.command}\``).join(", ");
const count = (n: number) => `${n} process${n === 1 ? "" : "es"}`;

/** The run's record of it: which commands were still running when its work was over, and what became of them. */
export function leftoversWarning(procs: MarkedProcess[], kept?: { sessionId: string }): string {
  if (kept)
    return `kept ${count(procs.length)} running on purpose (keepProcesses): ${listed(procs)}; \`subagents cancel ${kept.sessionId}\` ends them`;
  return `left ${count(procs.length)} running, ended with the run: ${listed(procs)}`;
}
