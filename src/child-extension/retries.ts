// pi's retries of a failed model request, told to the owner as `retry` events: pi emits them to its own session
// listeners only, so the embedded pi (and a user's pi compiled by us) hands each one over through this global
// (src/embedded/retry-events.ts makes that change to pi's code). A pi without it tells nothing of its retries.
import type { ChildEvent } from "../core/types.ts";

export const RETRY_KEY = "subagents.retry-event";

type PiRetry = { attempt?: number; maxAttempts?: number; delayMs?: number; errorMessage?: string };

/** From now on each retry pi starts in this process goes out as a `retry` event (the latest session's, in a kept
 *  child that loads this extension per session). */
export function reportRetries(emit: (ev: ChildEvent) => void): void {
  (globalThis as Record<symbol, unknown>)[Symbol.for(RETRY_KEY)] = (e: PiRetry) =>
    emit({
      type: "retry",
      attempt: e.attempt ?? 0,
      maxAttempts: e.maxAttempts ?? 0,
      delayMs: e.delayMs ?? 0,
      errorMessage: String(e.errorMessage ?? ""),
    });
}
