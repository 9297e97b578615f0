// The `subagent_finalize` contract (spec 001) and how strictly a run applies it. Shared by the runner (which
// judges the outcome) and the child extension (which offers the tool and delivers corrective messages).
import type { FinalizePayload } from "../../types.ts";

/**
 * - required: the child must call subagent_finalize; a plain ending gets corrective messages, then FINALIZE_MISSING
 *   (the `subagent` tool, and profiles/settings with `finalize: true`).
 * - optional: the tool is offered and wins when called, but a plain final text is accepted as the answer
 *   (the default of `delegate_to_subagents` and the CLI: spec 000's result is the last assistant text).
 * - off: no finalize tool at all (`finalize: false`).
 */
export type FinalizeMode = "required" | "optional" | "off";

export const FINALIZE_MODES: readonly FinalizeMode[] = ["required", "optional", "off"];

/** A profile's or the settings' explicit `finalize` wins (profile first); otherwise the front's default applies. */
export function resolveFinalizeMode(profile: boolean | undefined, settings: boolean | undefined, frontDefault: FinalizeMode): FinalizeMode {
  const explicit = profile ?? settings;
  if (explicit === undefined) return frontDefault;
  return explicit ? "required" : "off";
}

export const MAX_NUDGES = 2;
export const NUDGE_TEXT =
  "You stopped without calling `subagent_finalize`. Your task is not delivered until you do. Call `subagent_finalize` " +
  'now as your only action: status "SUCCESS" with your complete final answer in `result`, or status "ERROR" with ' +
  "what went wrong in `error`.";

export const FINALIZE_INSTRUCTIONS: Record<Exclude<FinalizeMode, "off">, string> = {
  required:
    "You are a sub-agent working for another agent. When your task is done, call the `subagent_finalize` tool as your " +
    'last action: status "SUCCESS" with your complete answer in `result`, or status "ERROR" with what went wrong in ' +
    "`error` (partial findings may go in `result`). Do not end with plain text: only the finalize call is returned.",
  optional:
    "You are a sub-agent working for another agent. When your task is done, end with your complete answer as plain " +
    'text, or call the `subagent_finalize` tool as your last action (status "SUCCESS" with the answer in `result`, or ' +
    'status "ERROR" with what went wrong in `error`).',
};

/** Why a finalize call is not acceptable, or null when it is (spec 001's rules). */
export function finalizeProblem(p: Partial<FinalizePayload>): string | null {
  if (p.status !== "SUCCESS" && p.status !== "ERROR") return 'status must be "SUCCESS" or "ERROR"';
  if (p.status === "SUCCESS" && !(typeof p.result === "string" && p.result.trim())) return "SUCCESS requires a non-empty result";
  if (p.status === "ERROR" && !(typeof p.error === "string" && p.error.trim())) return "ERROR requires a non-empty error";
  return null;
}
