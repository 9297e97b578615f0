// An attempt's clocks: the task's timeout (extended while tool calls keep coming), the hard maxRuntime,
// and the caller's abort signal. Returns what ends them all.
import type { Clock } from "../../host.ts";
import { abortStop } from "./abort-reason.ts";
import type { AskBroker } from "./ask.ts";
import type { RunState } from "./run-state.ts";
import type { RunSpec } from "./run-spec.ts";
import { timeoutStop, type Stop } from "./stops.ts";

/** The least time a child has after an answer to its question, past its timeout. */
export const ANSWER_GRACE_MS = 30_000;

export function startTimers(
  clock: Clock,
  spec: RunSpec,
  state: RunState,
  asks: AskBroker,
  started: number,
  stopWith: (s: Stop) => void,
): () => void {
  const timers: unknown[] = [];
  const at = (ms: number, fn: () => void) => timers.push(clock.setTimeout(fn, Math.max(0, ms)));
  // docs/settings.md `extendTimeoutDebounce`: when `timeout` elapses an idle timer of extendDebounce starts, and only a new tool *call* resets it.
  // A tool that is still running (a hung `npm run dev`) does not count as activity: nothing else stops it.
  const timeoutAt = started + spec.timeoutSec * 1000;
  const checkTimeout = () => {
    const debounceMs = spec.extendDebounceSec * 1000;
    // A child waiting on a question is not idle; askTimeout bounds the wait (ask.ts), so this cannot go on forever.
    if (asks.pending()) return at(Math.max(debounceMs, 1000), checkTimeout);
    // A person's answer is what the child waited for: it gets time to act on it, even with no debounce at all
    // (stopping it the moment the answer lands would have made the wait for nothing).
    const sinceAnswer = clock.now() - Math.max(timeoutAt, asks.lastAnswerAt);
    const sinceCall = clock.now() - Math.max(timeoutAt, state.lastToolCallAt);
    const answerLeft = asks.lastAnswerAt > 0 ? Math.max(debounceMs, ANSWER_GRACE_MS) - sinceAnswer : 0;
    const left = Math.max(debounceMs - sinceCall, answerLeft);
    if (left <= 0) stopWith(timeoutStop(state, spec.timeoutSec, clock.now()));
    else at(left, checkTimeout);
  };
  at(timeoutAt - clock.now(), checkTimeout);
  at(started + spec.maxRuntimeSec * 1000 - clock.now(), () =>
    stopWith(timeoutStop(state, spec.maxRuntimeSec, clock.now())),
  );
  const onAbort = () => stopWith(abortStop(spec.signal?.reason));
  if (spec.signal?.aborted) onAbort();
  else spec.signal?.addEventListener("abort", onAbort, { once: true });
  return () => {
    for (const t of timers) clock.clearTimeout(t);
    spec.signal?.removeEventListener("abort", onAbort);
  };
}
