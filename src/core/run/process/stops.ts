// Why a run was stopped from outside the child (a timeout, a loop, a rate limit that outlasted the call's wait),
// and the texts that say so.
import type { ChildEvent, ErrorCode } from "../../types.ts";
import type { RateGate } from "./rate-gate.ts";
import type { RunState } from "./run-state.ts";

export type Stop = { code: ErrorCode; message: string };

export function rateLimitedStop(gate: RateGate, ev: ChildEvent): Stop {
  const why =
    ev.type === "rate_limit"
      ? `${ev.status}${ev.retryAfterMs !== undefined ? `, retry after ${Math.ceil(ev.retryAfterMs / 1000)}s` : ""}`
      : (ev.type === "assistant" && ev.errorMessage) || "429";
  return {
    code: "RATE_LIMITED",
    message: `Rate limited (${why}): waiting longer would pass this call's ${Math.round(gate.maxWaitMs / 1000)}s limit`,
  };
}

export const timeoutMessage = (sec: number) => `Timed out after ${sec}s. Consider resuming with a longer timeout.`;

export const LOOP_MESSAGE = "Loop detected: sub-agent is repeating the same tool calls";

/** The spec's timeout text, plus which tool call was still running (the usual reason a child hangs). */
export function timeoutStop(state: RunState, sec: number, now: number): Stop {
  const open = [...state.openTools.values()].sort((a, b) => a.at - b.at)[0];
  const hung = open
    ? ` The tool call "${open.name}" had been running for ${Math.round((now - open.at) / 1000)}s without finishing.`
    : "";
  return { code: "SUBAGENT_TIMEOUT", message: `${timeoutMessage(sec)}${hung}` };
}
