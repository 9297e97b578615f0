// Why a task's signal was aborted decides how its end is recorded. A user's cancel (Esc, `subagents cancel`,
// Ctrl-C) is SUBAGENT_CANCELLED; the owner shutting down under it (a pi session ending with background tasks
// still running) is an interruption, recorded the way a run orphaned by a dead owner is (store recoverStale).
// A cancel says who asked for it when the front knows: a stop picked in a list (`/subagents`) and an aborted
// tool call (Esc) are different acts, and the model and the user read which one it was.
import type { ErrorCode } from "../../types.ts";

export const INTERRUPTED_BY_SHUTDOWN = "Session was interrupted (main agent session ended)";

type StopReason = { subagentsStop: "interrupted" } | { subagentsStop: "cancelled"; message: string };

/** The abort reason an owner passes when it stops its tasks because it is shutting down. */
export function ownerShutdown(): StopReason {
  return { subagentsStop: "interrupted" };
}

/** A cancel with its own words: `Stopped from /subagents`, `Cancelled: the tool call was aborted`. */
export function cancelledBy(message: string): StopReason {
  return { subagentsStop: "cancelled", message };
}

const stopOf = (reason: unknown): StopReason | null =>
  typeof reason === "object" && reason !== null && typeof (reason as StopReason).subagentsStop === "string"
    ? (reason as StopReason)
    : null;

/** How an aborted task ends; a queued one that never started says so. */
export function abortStop(reason: unknown, started = true): { code: ErrorCode; message: string } {
  const stop = stopOf(reason);
  if (stop?.subagentsStop === "interrupted") return { code: "SUBAGENT_FAILED", message: INTERRUPTED_BY_SHUTDOWN };
  if (stop?.subagentsStop !== "cancelled")
    return { code: "SUBAGENT_CANCELLED", message: started ? "Cancelled" : CANCELLED_BEFORE_START };
  return { code: "SUBAGENT_CANCELLED", message: started ? stop.message : `${stop.message} (before it started)` };
}

const CANCELLED_BEFORE_START = "Cancelled before it started";
