// What a repository may run in a pi session: its project-local agents and its hooks (settings subagents.hooks in the
// project's .pi/settings.json). The user's subagents.projectAgents decides ("allow", "deny"); "ask" asks once per
// file (the hooks: per list) and pi session when pi has a UI, and refuses with why when it has none.
import { findProfile, type Profile } from "../core/profiles/profile.ts";
import type { Settings } from "../core/settings.ts";
import type { PiSession } from "./session-state.ts";

/** What asking needs of the tool call's context (pi's ctx). */
export type ConsentContext = {
  hasUI: boolean;
  ui?: { confirm(title: string, message: string): Promise<boolean> };
};

/** Project-local profiles of a call that may not run, by the name the call used (so a display-style name cannot
 *  slip past the check: the lookup is the task's own), each with why. */
export async function refusedProfiles(
  ctx: ConsentContext,
  settings: Settings,
  profiles: Map<string, Profile>,
  session: PiSession,
  names: (string | undefined)[],
): Promise<Map<string, string>> {
  const refused = new Map<string, string>();
  for (const name of new Set(names)) {
    const p = name ? findProfile(profiles, name) : undefined;
    if (!name || !p || p.source !== "project" || !p.filePath || session.allowedProfiles.has(p.filePath)) continue;
    const policy = settings.projectAgents;
    if (policy === "allow") continue;
    if (policy === "deny")
      refused.set(
        name,
        `Project-local profile "${p.name}" (${p.filePath}) is not allowed: settings subagents.projectAgents is "deny".`,
      );
    else if (!ctx.hasUI || !ctx.ui) {
      refused.set(
        name,
        `Project-local profile "${p.name}" (${p.filePath}) needs consent; there is no UI to ask. Set subagents.projectAgents to "allow" to run it.`,
      );
    } else if (
      await ctx.ui.confirm(
        "Run a project-local sub-agent?",
        `Profile "${p.name}" comes from this repository (${p.filePath}) and sets the sub-agent's prompt and tools. Run it?`,
      )
    ) {
      session.allowedProfiles.add(p.filePath);
    } else refused.set(name, `Project-local profile "${p.name}" was not approved.`);
  }
  return refused;
}

/**
 * Whether this call may run the project's commands (its hooks and its isolated tasks' setup): "allowed", or why not. Unset: the engine's own rule
 * (core/run/task-hooks.ts) decides, which refuses them with why unless projectAgents is "allow".
 */
export async function projectHooksConsent(
  ctx: ConsentContext,
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
