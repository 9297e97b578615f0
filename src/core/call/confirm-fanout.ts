// `subagents.confirmAbove`: a delegate call with more tasks than that asks the user before anything starts (Esc or
// "No" refuses, and the model is told so). Headless pi (print/json mode) has no one to ask: such a call is refused
// unless the environment of the process serving the front (pi, `subagents mcp`) says SUBAGENTS_ALLOW_FANOUT=1 — something a script's author sets, not
// the model and not a repository.
import type { Settings } from "../settings.ts";
import type { CapRefusal } from "../session-caps.ts";

export const ALLOW_FANOUT_ENV = "SUBAGENTS_ALLOW_FANOUT";

/** What asking needs of a front's context: pi's ctx; `{ hasUI: false }` where no one can be asked (subagents mcp). */
export type ConfirmContext = { hasUI: boolean; ui?: { confirm(title: string, message: string): Promise<boolean> } };

export async function fanoutRefusal(
  ctx: ConfirmContext,
  settings: Settings,
  tasks: number,
  env: Record<string, string | undefined>,
  /** Where the variable goes: the process that serves the front ("run pi", "start subagents mcp"). */
  process = "run pi",
): Promise<CapRefusal | null> {
  const above = settings.confirmAbove;
  if (above === undefined || tasks <= above) return null;
  const what = `this call starts ${tasks} sub-agents (subagents.confirmAbove is ${above})`;
  if (ctx.hasUI && ctx.ui) {
    if (
      await ctx.ui.confirm(
        `Start ${tasks} sub-agents?`,
        `The model asks to start ${tasks} sub-agents at once (subagents.confirmAbove is ${above}). Allow it?`,
      )
    )
      return null;
    return {
      code: "SPAWN_LIMIT",
      message: `Not approved: the user declined, ${what}. Nothing was started; do not retry it as is — do the work with fewer sub-agents or ask the user.`,
    };
  }
  if (env[ALLOW_FANOUT_ENV] === "1") return null;
  return {
    code: "SPAWN_LIMIT",
    message: `Not approved: ${what} and there is no UI to ask the user. Nothing was started. Use at most ${above} tasks, or ${process} with ${ALLOW_FANOUT_ENV}=1 to allow it.`,
  };
}
