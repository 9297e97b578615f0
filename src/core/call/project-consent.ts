// Project-local agents (`.pi/agents/`, …) come from the repository and set a child's prompt and tools, so running
// one needs the user's consent (docs/pi-extension.md "Safety"): subagents.projectAgents "allow" or "deny" decides,
// else the front asks its user when it has one. A front without a person to ask (headless pi, `subagents mcp`)
// refuses them with how to allow them. Refused tasks fail alone (core/call/prepare.ts). A saved workflow from the
// repository asks the same way (workflow.ts: projectFileRefusal).
import { findProfile, type Profile } from "../profiles/profile.ts";
import type { Settings } from "../settings.ts";

type Confirm = (title: string, message: string) => Promise<boolean>;

/**
 * Why one project file (an agent, a saved workflow) may not run here, or null. `what` names it in the refusal
 * (`Project-local profile "x"`), `question` is what the user is asked; a file the user approves joins `allowed`
 * (the files already approved in this front's session), and one already there is not asked about again.
 */
export async function projectFileRefusal(
  policy: Settings["projectAgents"],
  file: string,
  what: string,
  question: { title: string; message: string },
  allowed: Set<string>,
  confirm?: Confirm,
): Promise<string | null> {
  if (allowed.has(file) || policy === "allow") return null;
  if (policy === "deny") return `${what} (${file}) is not allowed: settings subagents.projectAgents is "deny".`;
  if (!confirm)
    return `${what} (${file}) needs consent; there is no UI to ask. Set subagents.projectAgents to "allow" to run it.`;
  if (!(await confirm(question.title, question.message))) return `${what} was not approved.`;
  allowed.add(file);
  return null;
}

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
    if (!name || !p || p.source !== "project" || !p.filePath) continue;
    const why = await projectFileRefusal(
      settings.projectAgents,
      p.filePath,
      `Project-local profile "${p.name}"`,
      {
        title: "Run a project-local sub-agent?",
        message: `Profile "${p.name}" comes from this repository (${p.filePath}) and sets the sub-agent's prompt and tools. Run it?`,
      },
      allowed,
      confirm,
    );
    if (why) refused.set(name, why);
  }
  return refused;
}
