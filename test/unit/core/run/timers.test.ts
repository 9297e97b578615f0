// An attempt's timeout (core/run/process/timers.ts) with a manual clock: past `timeout`, only a new tool call or an
// answer to the child's question keeps it going; an open question is never idle; an answer leaves the child time
// to act on it even with no debounce at all.
import { expect, test } from "bun:test";
import { ANSWER_GRACE_MS, startTimers } from "../../../../src/core/run/process/timers.ts";
import { newRunState } from "../../../../src/core/run/process/run-state.ts";
import type { RunSpec } from "../../../../src/core/run/process/run-spec.ts";
import type { AskBroker } from "../../../../src/core/run/process/ask.ts";
import type { Stop } from "../../../../src/core/run/process/stops.ts";
import { manualClock } from "../../../support/manual-clock.ts";

function attempt(timeoutSec: number, extendDebounceSec: number) {
  const { clock, advance } = manualClock();
  const state = newRunState(0);
  let open = false;
  const asks = { pending: () => open, lastAnswerAt: 0 } as unknown as AskBroker & { lastAnswerAt: number };
  const stops: { at: number; stop: Stop }[] = [];
  const spec = { timeoutSec, extendDebounceSec, maxRuntimeSec: 3600 } as RunSpec;
  startTimers(clock, spec, state, asks, 0, (stop) => stops.push({ at: clock.now(), stop }));
  return {
    advance,
    stops,
    ask: () => {
      open = true;
    },
    answer: () => {
      open = false;
      asks.lastAnswerAt = clock.now();
    },
    toolCall: () => {
      state.lastToolCallAt = clock.now();
    },
  };
}

test("no debounce: stopped when the timeout passes", () => {
  const a = attempt(10, 0);
  a.advance(9_999);
  expect(a.stops).toEqual([]);
  a.advance(1);
  expect(a.stops.map((s) => [s.at, s.stop.code])).toEqual([[10_000, "SUBAGENT_TIMEOUT"]]);
});

test("no debounce: a question open past the timeout holds the child; its answer leaves it time to act on it", () => {
  const a = attempt(10, 0);
  a.advance(5_000);
  a.ask();
  a.advance(60_000);
  expect(a.stops, "stopped while its question was open").toEqual([]);
  a.answer();
  a.advance(ANSWER_GRACE_MS - 1);
  expect(a.stops, "stopped right after the answer").toEqual([]);
  a.advance(2_000);
  expect(a.stops.map((s) => [s.at, s.stop.code])).toEqual([[65_000 + ANSWER_GRACE_MS, "SUBAGENT_TIMEOUT"]]);
});

test("a debounce longer than the grace counts from the answer too, and tool calls extend it as before", () => {
  const a = attempt(10, 60);
  a.advance(5_000);
  a.ask();
  a.advance(20_000);
  a.answer();
  a.advance(59_000);
  expect(a.stops).toEqual([]);
  a.toolCall(); // at 84 s: the next 60 s are the child's
  a.advance(59_000);
  expect(a.stops).toEqual([]);
  a.advance(2_000);
  expect(a.stops.map((s) => s.at)).toEqual([144_000]);
});
