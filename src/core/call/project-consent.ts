// Project-local agents (`.pi/agents/`, …) come from the repository and set a child's prompt and tools, so running
// one needs the user's consent (docs/pi-extension.md "Safety"): subagents.projectAgents "allow" or "deny" decides,
// else the front asks its user when it has one. A front without a person to ask (headless pi, `subagents mcp`)
// refuses them with how to allow them. Refused tasks fail alone (core/call/prepare.ts).
import { findProfile, type Profile } from "../profiles/profile.ts";
import type { Settings } from "../settings.ts";

type Confirm = (title: string, message: string) => Promise<boolean>;

/** The call's project-local profiles that may not run, by the name the call used, with why. `allowed` holds the
 * files the user already approved in this front's session (and gains the ones approved now). */
export async function projectProfileRefusals(
  settings: Pick<Settings, "projectAgents">,
  profiles: Map<string, Profile>,
  names: (string | undefined)[],
  allowed: Set<string>,
  confirm?: Confirm,
): Promise<Map<string, string>> {
  const refused = new Map<string, string>();
  for (const name of new Set(names)) {
    // The same lookup the task uses, and refusals keyed by the name as the call wrote it: a display-style
    // name ("Repo Helper") cannot slip past the consent check.
    const p = name ? findProfile(profiles, name) : undefined;
    if (!name || !p || p.source !== "project" || !p.filePath || allowed.has(p.filePath)) continue;
    const policy = settings.projectAgents;
    if (policy === "allow") continue;
    if (policy === "deny")
      refused.set(
        name,
        `Project-local profile "${p.name}" (${p.filePath}) is not allowed: settings subagents.projectAgents is "deny".`,
      );
    else if (!confirm) {
      refused.set(
        name,
        `Project-local profile "${p.name}" (${p.filePath}) needs consent; there is no UI to ask. Set subagents.projectAgents to "allow" to run it.`,
      );
    } else if (
      await confirm(
        "Run a project-local sub-agent?",
        `Profile "${p.name}" comes from this repository (${p.filePath}) and sets the sub-agent's prompt and tools. Run it?`,
      )
    ) {
      allowed.add(p.filePath);
    } else refused.set(name, `Project-local profile "${p.name}" was not approved.`);
  }
  return refused;
}
