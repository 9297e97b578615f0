// `subagents.hooks`: shell commands run on this machine when a task starts and ends (core/run/task-hooks.ts). A project's
// settings may name hooks too, but they are kept apart from the user's own: a cloned repository must not run
// commands at every task without the consent its project agents need (subagents.projectAgents, as the user's own
// settings say it: a project's file cannot grant itself that consent).
export const HOOK_EVENTS = ["taskStart", "taskEnd"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export type HookCommand = { command: string; event: HookEvent; source: "user" | "project" | "agent"; file: string };

export type HookSettings = {
  hooks: {
    /** The user's own hooks, then the project's (each marked with where it came from). */
    commands: HookCommand[];
    /** Seconds a hook may run before it is ended (a recorded warning). */
    timeout: number;
    /** subagents.projectAgents as the user's own settings say it: what a project's hooks need to run. */
    projectConsent: "ask" | "allow" | "deny";
  };
};

export const DEFAULT_HOOK_TIMEOUT = 10;
const MAX_HOOK_TIMEOUT = 3600;

export const defaultHookSettings = (): HookSettings => ({
  hooks: { commands: [], timeout: DEFAULT_HOOK_TIMEOUT, projectConsent: "ask" },
});

/** One command or a list of them. */
function commandList(v: unknown): string[] | null {
  if (typeof v === "string") return v.trim() ? [v] : [];
  if (Array.isArray(v) && v.every((c) => typeof c === "string")) return (v as string[]).filter((c) => c.trim());
  return null;
}

/** Applies one raw `subagents` object's hooks over `out` (mutated). */
export function mergeHookSettings(
  out: HookSettings,
  r: Record<string, unknown>,
  where: string,
  userScope: boolean,
  warnings: string[],
): void {
  out.hooks = { ...out.hooks, commands: [...out.hooks.commands] };
  // The consent rule for a project's hooks is the user's projectAgents (a project's own value does not count).
  if (userScope && (r.projectAgents === "ask" || r.projectAgents === "allow" || r.projectAgents === "deny"))
    out.hooks.projectConsent = r.projectAgents;
  const raw = r.hooks;
  if (raw === undefined || raw === null) return;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    warnings.push(
      `${where}: subagents.hooks must be an object ({"taskStart": "command", "taskEnd": "command", "timeout": 10}); ignored`,
    );
    return;
  }
  const h = raw as Record<string, unknown>;
  for (const event of HOOK_EVENTS) {
    if (h[event] === undefined) continue;
    const list = commandList(h[event]);
    if (!list) {
      warnings.push(`${where}: subagents.hooks.${event} must be a shell command or a list of them; ignored`);
      continue;
    }
    for (const command of list)
      out.hooks.commands.push({ command, event, source: userScope ? "user" : "project", file: where });
  }
  if (h.timeout !== undefined) {
    const v = h.timeout;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0)
      warnings.push(`${where}: subagents.hooks.timeout must be a positive number of seconds; ignored`);
    else if (!userScope && v > out.hooks.timeout)
      warnings.push(
        `${where}: subagents.hooks.timeout = ${v} would lengthen the hooks' bound; a project's settings can only shorten it: ignored`,
      );
    else out.hooks.timeout = Math.min(v, MAX_HOOK_TIMEOUT);
  }
  const unknown = Object.keys(h).filter((k) => k !== "timeout" && !(HOOK_EVENTS as readonly string[]).includes(k));
  if (unknown.length)
    warnings.push(
      `${where}: subagents.hooks has unknown keys ${unknown.join(", ")} (known: ${HOOK_EVENTS.join(", ")}, timeout)`,
    );
}
