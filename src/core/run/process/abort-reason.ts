// Why a task's signal was aborted decides how its end is recorded. A user's cancel (Esc, `subagents cancel`,
// Ctrl-C) is SUBAGENT_CANCELLED; the owner shutting down under it (a pi session ending with background tasks
// still running) is an interruption, recorded the way a run orphaned by a dead owner is (store recoverStale).
import type { ErrorCode } from "../../types.ts";

export const INTERRUPTED_BY_SHUTDOWN = "Session was interrupted (main agent session ended)";

/** The abort reason an owner passes when it stops its tasks because it is shutting down. */
export function ownerShutdown(): { subagentsStop: "interrupted" } {
  return { subagentsStop: "interrupted" };
}

const isShutdown = (reason: unknown) =>
  typeof reason === "object" &&
  reason !== null &&
  (reason as { subagentsStop?: string }).subagentsStop === "interrupted";

/** How an aborted task ends; a queued one that never started says so. */
export function abortStop(reason: unknown, started = true): { code: ErrorCode; message: string } {
  if (isShutdown(reason)) return { code: "SUBAGENT_FAILED", message: INTERRUPTED_BY_SHUTDOWN };
  return { code: "SUBAGENT_CANCELLED", message: started ? "Cancelled" : CANCELLED_BEFORE_START };
}

export const CANCELLED_BEFORE_START = "Cancelled before it started";
