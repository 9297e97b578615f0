// What a task runs with when it does not say: its model and its timeout, from its profile, else the settings.
import { findProfile, type Profile } from "../profiles/profile.ts";
import { readUserModels, resolveProfileModel } from "../profiles/model-resolve.ts";
import type { Engine } from "./engine.ts";
import type { TaskInput } from "./task-types.ts";

/**
 * The model a task runs on: the task's or profile's `model` as its author meant it (model-resolve.ts).
 * `model: null` means "no --model" (pi's default) even when the profile names one; undefined leaves the
 * profile's provider-only setting to the invocation.
 */
export function chooseModel(
  engine: Engine,
  profile: Profile | null,
  requested: string | undefined,
): { model?: string | null; warning?: string } {
  const wanted = requested ?? profile?.model;
  if (!wanted) return {};
  engine.caches.userModels ??= readUserModels(engine.host, engine.agentDir);
  const choice = resolveProfileModel(profile, wanted, {
    parentModel: engine.call.parentModel,
    aliases: engine.settings.modelAliases,
    user: engine.caches.userModels,
  });
  return { model: choice.model ?? null, warning: choice.warning };
}

/** The timeout that really applies to a task: its own, else its profile's, else the settings'. */
export function effectiveTimeout(engine: Engine, input: Pick<TaskInput, "timeoutSec" | "profile">): number {
  const profile = input.profile ? findProfile(engine.profiles, input.profile) : undefined;
  return input.timeoutSec ?? profile?.timeout ?? engine.settings.timeout;
}
