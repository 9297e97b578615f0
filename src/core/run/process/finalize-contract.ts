// The `subagent_finalize` contract (docs/limits.md "How a sub-agent runs") and how strictly a run applies it. Shared by the runner (which
// judges the outcome) and the child extension (which offers the tool and delivers corrective messages).
import type { FinalizePayload } from "../../types.ts";

/**
 * - required: the child must call subagent_finalize; a plain ending gets corrective messages, then FINALIZE_MISSING
 *   (the `subagent` tool, and profiles/settings with `finalize: true`).
 * - optional: the tool is offered and wins when called, but a plain final text is accepted as the answer
 *   (the default of `delegate_to_subagents` and the CLI: the result is the last assistant text).
 * - off: no finalize tool at all (`finalize: false`).
 */
export type FinalizeMode = "required" | "optional" | "off";

export const FINALIZE_MODES: readonly FinalizeMode[] = ["required", "optional", "off"];

/** A profile's or the settings' explicit `finalize` wins (profile first); otherwise the front's default applies. */
export function resolveFinalizeMode(
  profile: boolean | undefined,
  settings: boolean | undefined,
  frontDefault: FinalizeMode,
): FinalizeMode {
  const explicit = profile ?? settings;
  if (explicit === undefined) return frontDefault;
  return explicit ? "required" : "off";
}

export const MAX_NUDGES = 2;
export const NUDGE_TEXT =
  "You stopped without calling `subagent_finalize`. Your task is not delivered until you do. Call `subagent_finalize` " +
  'now as your only action: status "SUCCESS" with your complete final answer in `result`, or status "ERROR" with ' +
  "what went wrong in `error`.";

/** A cache-true fork (fork.ts) without the finalize tool: said after its task, in its first message. */
export const FORK_ANSWER_INSTRUCTION =
  "You are now a sub-agent forked from the conversation above: do only the task above, and end with your complete answer as plain text.";

// Short on purpose: every request of every child carries them (the tool's description says how to call it).
export const FINALIZE_INSTRUCTIONS: Record<Exclude<FinalizeMode, "off">, string> = {
  required:
    "You are a sub-agent. End by calling `subagent_finalize` with your complete result: plain text is not returned.",
  optional: "You are a sub-agent. Your final message (plain text, or a `subagent_finalize` call) is your result.",
};

/** Why a finalize call is not acceptable, or null when it is (SUCCESS needs a result, ERROR an error). */
export function finalizeProblem(p: Partial<FinalizePayload>): string | null {
  if (p.status !== "SUCCESS" && p.status !== "ERROR") return 'status must be "SUCCESS" or "ERROR"';
  if (p.status === "SUCCESS" && !(typeof p.result === "string" && p.result.trim()))
    return "SUCCESS requires a non-empty result";
  if (p.status === "ERROR" && !(typeof p.error === "string" && p.error.trim()))
    return "ERROR requires a non-empty error";
  return null;
}
