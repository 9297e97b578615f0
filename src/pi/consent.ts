// What a repository may run in a pi session besides its project-local agents (whose consent every front shares:
// core/call/project-consent.ts): its hooks (settings subagents.hooks in the project's .pi/settings.json) and its
// isolated tasks' setup. hooks.projectConsent "ask" asks once per list and pi session when pi has a UI.
import type { ConfirmContext } from "../core/call/confirm-fanout.ts";
import type { Settings } from "../core/settings.ts";
import type { PiSession } from "./session-state.ts";

/**
 * Whether this call may run the project's commands (its hooks and its isolated tasks' setup): "allowed", or why not. Unset: the engine's own rule
 * (core/run/task-hooks.ts) decides, which refuses them with why unless projectAgents is "allow".
 */
export async function projectHooksConsent(
  ctx: ConfirmContext,
  settings: Settings,
  session: PiSession,
): Promise<string | undefined> {
  const project = settings.hooks.commands
    .filter((h) => h.source === "project")
    .map((h) => ({ file: h.file, when: h.event as string, command: h.command }));
  if (settings.setup?.source === "project")
    project.push({ file: settings.setup.file, when: "setup (isolated tasks)", command: settings.setup.command });
  if (!project.length || settings.hooks.projectConsent !== "ask") return undefined;
  const key = project.map((h) => `${h.file}\0${h.when}\0${h.command}`).join("\n");
  if (session.allowedHooks.has(key)) return "allowed";
  if (!ctx.hasUI || !ctx.ui) return undefined;
  const list = project.map((h) => `${h.when}: ${h.command}`).join("\n");
  if (
    await ctx.ui.confirm(
      "Run this project's sub-agent commands?",
      `${project[0].file} runs these shell commands on this machine when a sub-agent task starts or ends, or before an isolated task starts:\n${list}\nRun them?`,
    )
  ) {
    session.allowedHooks.add(key);
    return "allowed";
  }
  return "a project's commands were not approved";
}
