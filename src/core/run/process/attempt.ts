// One child process from spawn to exit: started (readers.ts), its events under the rules (event-rules.ts), its
// clocks (timers.ts), stopped with the kill protocol when a rule says so; on every end path the readers get a
// moment, the tree is reaped and the run's leftovers (processes that left the tree but carry its mark) are ended.
import type { Clock, Host } from "../../host.ts";
import type { AskBroker } from "./ask.ts";
import type { BudgetWatch } from "./budget-watch.ts";
import { eventRules, type AttemptRun } from "./event-rules.ts";
import { killTree, reapDescendants, waitFor } from "./kill.ts";
import { endLeftovers } from "./leftovers.ts";
import { liveMarks, MARK_ENV, newMark } from "./marks.ts";
import { readStreams, spawnChild } from "./readers.ts";
import type { Attempt } from "./result.ts";
import type { RunState } from "./run-state.ts";
import { DEFAULT_LIMITS, JSON_MODE_EVENT_BYTES, type RunSpec } from "./run-spec.ts";
import type { Stop } from "./stops.ts";
import { startTimers } from "./timers.ts";

export async function runAttempt(
  host: Host,
  clock: Clock,
  spec: RunSpec,
  state: RunState,
  stdin: string,
  started: number,
  budget: BudgetWatch,
  asks: AskBroker,
): Promise<Attempt> {
  const limits = {
    ...DEFAULT_LIMITS,
    ...(spec.transport === "json" ? { eventBytes: JSON_MODE_EVENT_BYTES } : {}),
    ...spec.limits,
  };
  // What the child's work starts carries this mark (a kept child gives its task's session a mark of its own).
  let mark = spec.reuse ? null : newMark(spec.env[MARK_ENV], host.pid, spec.sessionId ?? "", spec.keepProcesses);
  let proc: ReturnType<typeof spawnChild>;
  try {
    proc = spawnChild(host, spec, stdin, mark);
  } catch (err) {
    return {
      exit: { code: null, signal: null },
      stop: { code: "SUBAGENT_FAILED", message: `Failed to spawn sub-agent process: ${(err as Error).message}` },
      stderr: "",
      stderrHead: "",
      stderrWhole: true,
      leftovers: [],
    };
  }
  mark ??= proc.mark ?? null;
  if (mark) liveMarks.add(mark);
  spec.onSpawn?.(proc.pid);
  spec.onControl?.(proc.sendControl ?? null);
  // Messages from siblings held for this child are written now (its extension holds them until its agent runs).
  spec.team?.attach(proc.sendControl ?? null);
  // Every hold of the call reaches this child's next model request, and its window.
  const sendHold = (until: number) => {
    state.holdUntil = until;
    state.version++;
    proc.sendControl?.(JSON.stringify({ type: "hold", until }));
  };
  const unhold = spec.rateGate?.onHold(sendHold);
  if (spec.rateGate?.remaining()) sendHold(spec.rateGate.until);

  const run: AttemptRun = { stop: null, killing: null, finalTree: [] };
  const stopWith = (s: Stop) => {
    run.stop ??= s;
    run.killing ??= killTree(host, clock, proc, spec.killGraceMs, spec.termTree);
  };
  const { onEvent, clearGrace } = eventRules({ host, clock, spec, state, proc, budget, asks, run, stopWith });
  const streams = readStreams(proc, spec, limits, onEvent, stopWith);
  const stopTimers = startTimers(clock, spec, state, asks, started, stopWith);

  let exit = await proc.exited;
  asks.closeAll("ended");
  unhold?.();
  spec.onControl?.(null);
  spec.team?.attach(null);
  if (run.killing) exit = await run.killing;
  // Grandchildren can hold our pipes open after pi exits: give the readers a moment, never wait for EOF.
  await waitFor(clock, streams.done, 300);
  streams.end(exit.code);
  reapDescendants(host, run.finalTree);
  // Processes that left the tree (double-forked, setsid) still carry the mark: found and ended here, on every end
  // path, unless the task keeps them. A kept child's lease was looked at by its pool as the task settled, before
  // the process could take another task (sparing pi's own helpers): looking again would cost a scan of every
  // process per task, a third of a batch owner's CPU, and end the helpers the pool spared.
  // A run stopped by a person (cancel, Ctrl-C, SIGTERM) keeps nothing, keepProcesses or not.
  const leftovers = [...(proc.leftovers ?? [])];
  if (mark) {
    if (!proc.leftovers)
      for (const p of await endLeftovers(host, clock, mark, {
        keep: spec.keepProcesses && !spec.signal?.aborted,
        graceMs: spec.killGraceMs,
      }))
        if (!leftovers.some((l) => l.pid === p.pid)) leftovers.push(p);
    liveMarks.delete(mark);
  }
  clearGrace();
  stopTimers();
  const err = streams.stderr();
  const keptChild = proc.task && proc.task > 1 ? { pid: proc.pid, task: proc.task } : undefined;
  return {
    exit,
    stop: run.stop,
    stderr: err.tail,
    stderrHead: err.head,
    stderrWhole: err.whole,
    ...(keptChild ? { keptChild } : {}),
    leftovers,
  };
}
