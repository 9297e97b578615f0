// The model a task runs on (and each fallback model): as its author meant it, resolved against the parent's model,
// the settings' aliases and the user's own models.
import type { Profile } from "../profiles/profile.ts";
import { resolveProfileModel } from "../profiles/model-resolve.ts";
import { type Engine, userModels } from "./engine.ts";

/**
 * The model a task runs on: the model it asked for (the resolved task's, or a fallback) as its author meant it
 * (model-resolve.ts). `model: null` means "no --model" (pi's default) even when the profile names one; undefined
 * leaves the profile's provider-only setting to the invocation.
 */
export function chooseModel(
  engine: Pick<Engine, "call" | "settings" | "host" | "agentDir" | "caches">,
  profile: Profile | null,
  wanted: string | undefined,
): { model?: string | null; warning?: string } {
  if (!wanted) return {};
  const choice = resolveProfileModel(profile, wanted, {
    parentModel: engine.call.parentModel,
    aliases: engine.settings.modelAliases,
    user: userModels(engine),
  });
  return { model: choice.model ?? null, warning: choice.warning };
}
