// Model fallback: when a task's model fails for good (a non-retryable provider error, or pi's retries and our
// rate-limit waiting are spent), the task goes on with the next model of its profile's `fallbackModels` (else
// the settings' `subagents.fallbackModels`). The child continues its own session file when it has one, so work
// already done is kept; the result names the model that answered. A model pi refuses at start-up (unknown here,
// or matched to a provider without credentials) falls back to pi's default model, said as a warning.
import { addUsage } from "../types.ts";
import type { Profile } from "../profiles/profile.ts";
import type { Settings } from "../settings.ts";
import type { RunResult } from "../types.ts";
import type { Launch } from "./child-launch.ts";
import { expectedDefaultModel } from "./default-model.ts";
import { chooseModel } from "./model-choice.ts";
import type { TaskContext } from "./task-context.ts";

const FALLBACK_CONTINUE_TEXT = "The previous model failed; continue the task where it left off.";

export function fallbackModels(profile: Profile | null, settings: Settings): string[] {
  return profile?.fallbackModels?.length ? profile.fallbackModels : settings.fallbackModels;
}

/** The run ended because its model call failed (not a stop of ours, a crash or the task's own ERROR). */
function modelFailed(r: RunResult): boolean {
  return (
    r.status === "error" &&
    r.stopReason === "error" &&
    (r.errorCode === "SUBAGENT_FAILED" || r.errorCode === "RATE_LIMITED")
  );
}

/** The failed run got at least one answer through (errored attempts are not kept in pi's context). */
const didWork = (r: RunResult) => r.messages.some((m) => m.role === "assistant" && !m.error);

/** The next attempt's result, carrying what the failed ones spent. */
function afterFallback(failed: RunResult, failedModel: string, next: RunResult, warning: string): RunResult {
  const failedModels = [...(failed.failedModels ?? []), failedModel];
  return {
    ...next,
    usage: addUsage(failed.usage, next.usage),
    failedModels,
    warnings: [...(failed.warnings ?? []), warning, ...(next.warnings ?? [])],
  };
}

/** The task's run on its model, then on each fallback model while the model is what failed. */
export async function runWithFallbacks(task: TaskContext, launch: Launch): Promise<RunResult> {
  const { engine, input, profile, model, sessionFile, prompt, wiring, warnings } = task;
  const { host, settings } = engine;
  // Another harness's CLI takes the model as written: pi's aliases and model list are not its.
  let result = await launch(input.runtime === "pi" ? model.model : foreignModel(input.model));
  // With no --model, pi's default model was asked for: the child's pi may not know it (src/child-extension/model-guard.ts).
  let refused = refusedModel(
    result,
    model.model ?? expectedDefaultModel(engine, task.cwd, task.trust) ?? "pi's default model",
  );
  let failedModel = result.model ?? model.model ?? "the default model";
  for (const next of fallbackModels(profile, settings)) {
    if (wiring.signal?.aborted || !(refused || modelFailed(result))) break;
    const choice = chooseModel(engine, profile, next);
    const warning = `model ${failedModel} failed (${refused ?? result.error}): continued on ${choice.model ?? next}`;
    // Work the failed model already did is kept: its session goes on. Without any, the task starts over.
    const stdin = didWork(result) && host.stat(sessionFile)?.isFile ? FALLBACK_CONTINUE_TEXT : prompt;
    result = afterFallback(result, failedModel, await launch(choice.model, stdin, result.usage), warning);
    refused = choice.model ? refusedModel(result, choice.model) : null;
    failedModel = result.model ?? choice.model ?? next;
  }
  if (refused && model.model && !wiring.signal?.aborted) {
    // pi could not use the model and exited before any model call: run on the default model instead, and say so.
    warnings.unshift(
      `${refused}: running on ${engine.caches.userModels?.defaultModel ?? "pi's default model"} instead (map it with subagents.modelAliases)`,
    );
    result = await launch(null);
  }
  return result;
}

/**
 * Why pi refused the model at start-up, when that is why the run failed (no model call was made): it did not
 * know the name, or it matched the name to a provider without credentials. Else null.
 */
function refusedModel(r: RunResult, model: string): string | null {
  if (r.status !== "error" || r.usage.turns > 0) return null;
  if (/Model "[^"]+" not found/.test(r.error ?? "")) return `model "${model}" is not known to pi here`;
  const provider = /No API key found for ([\w.-]*[\w-])/.exec(r.error ?? "")?.[1];
  return provider ? `model "${model}" is matched by pi to provider "${provider}", which has no credentials here` : null;
}

const foreignModel = (m: string | undefined) => (m && m !== "inherit" ? m : undefined);
