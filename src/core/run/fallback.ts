// Model fallback: when a task's model fails for good (a non-retryable provider error, or pi's retries and our
// rate-limit waiting are spent), the task goes on with the next model of its profile's `fallbackModels` (else
// the settings' `subagents.fallbackModels`). The child continues its own session file when it has one, so work
// already done is kept; the result names the model that answered.
import { addUsage } from "../types.ts";
import type { Profile } from "../profiles/profile.ts";
import type { Settings } from "../settings.ts";
import type { RunResult } from "../types.ts";

export const FALLBACK_CONTINUE_TEXT = "The previous model failed; continue the task where it left off.";

export function fallbackModels(profile: Profile | null, settings: Settings): string[] {
  return profile?.fallbackModels?.length ? profile.fallbackModels : settings.fallbackModels;
}

/** The run ended because its model call failed (not a stop of ours, a crash or the task's own ERROR). */
export function modelFailed(r: RunResult): boolean {
  return (
    r.status === "error" &&
    r.stopReason === "error" &&
    (r.errorCode === "SUBAGENT_FAILED" || r.errorCode === "RATE_LIMITED")
  );
}

/** The failed run got at least one answer through (errored attempts are not kept in pi's context). */
export const didWork = (r: RunResult) => r.messages.some((m) => m.role === "assistant" && !m.error);

/** The next attempt's result, carrying what the failed ones spent. */
export function afterFallback(failed: RunResult, failedModel: string, next: RunResult, warning: string): RunResult {
  const failedModels = [...(failed.failedModels ?? []), failedModel];
  return {
    ...next,
    usage: addUsage(failed.usage, next.usage),
    failedModels,
    warnings: [...(failed.warnings ?? []), warning, ...(next.warnings ?? [])],
  };
}
