// What a run's commands left running (marks.ts): found by the run's mark once its child is gone (or its lease on
// a kept child is over), named in the run's record, and ended with the kill protocol — SIGTERM, the grace
// period, SIGKILL — unless the task keeps them on purpose (keepProcesses).
import type { Clock, Host } from "../../host.ts";
import { within, type MarkedProcess } from "./marks.ts";
import { TERM_GRACE_MS } from "./kill.ts";

const POLL_MS = 100;
/** Rounds of looking again after an end: a leftover may start another process while it is being ended. */
const ROUNDS = 3;

export const marksOf = (host: Host, run: string): MarkedProcess[] =>
  (host.marked?.() ?? []).filter((p) => within(p.mark, run));

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
    const now = marksOf(host, run).filter((p) => !opts.spare?.(p.pid));
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
