// Fan-out and spend caps of one pi session (one CLI invocation or background supervisor): the checks made before
// a call starts anything, the check before each queued task starts, and the texts that name the setting, its
// value and what was used. Pure: what was used comes from the caller (the store, live children).
import type { CapSettings } from "./cap-settings.ts";
import type { ErrorCode } from "./types.ts";

/** What a session's children used so far: children started (running ones included) and dollars spent. */
export type CapsUsed = { spawns: number; cost: number };

export type CapRefusal = { code: Extract<ErrorCode, "SPAWN_LIMIT" | "BUDGET_EXCEEDED">; message: string };

export const usd = (n: number) => `$${n.toFixed(2)}`;

/** Whether a call of `tasks` children (with its own maxCost) may start; `scope` says whose caps these are. */
export function callRefusal(
  caps: CapSettings,
  used: CapsUsed,
  call: { tasks: number; maxCost?: number },
  scope = "this pi session",
): CapRefusal | null {
  const max = caps.maxSpawnsPerSession;
  if (used.spawns + call.tasks > max) {
    return {
      code: "SPAWN_LIMIT",
      message:
        `Spawn limit: subagents.maxSpawnsPerSession is ${max}; ${scope} has started ${used.spawns} sub-agent${used.spawns === 1 ? "" : "s"}, ` +
        `and this call asks for ${call.tasks} more. Nothing was started. Do the rest yourself, or ask the user to raise the setting.`,
    };
  }
  const cap = caps.maxSessionCost;
  if (cap === undefined) return null;
  if (used.cost >= cap) {
    return {
      code: "BUDGET_EXCEEDED",
      message: `Session budget exceeded: subagents.maxSessionCost is ${usd(cap)}; ${scope}'s sub-agents have spent ${usd(used.cost)}. Nothing was started.`,
    };
  }
  if (call.maxCost !== undefined && call.maxCost > cap - used.cost) {
    return {
      code: "BUDGET_EXCEEDED",
      message: `Session budget: this call's maxCost ${usd(call.maxCost)} is more than what is left of subagents.maxSessionCost ${usd(cap)} (${usd(used.cost)} spent, ${usd(cap - used.cost)} left). Nothing was started; lower maxCost.`,
    };
  }
  return null;
}

/** Checked as each queued task is about to start: once the cost cap is reached, no more children start. */
export function startRefusal(caps: CapSettings, used: CapsUsed, scope = "this pi session"): CapRefusal | null {
  const cap = caps.maxSessionCost;
  if (cap === undefined || used.cost < cap) return null;
  return {
    code: "BUDGET_EXCEEDED",
    message: `Session budget exceeded: subagents.maxSessionCost is ${usd(cap)}; ${scope}'s sub-agents have spent ${usd(used.cost)}: not started`,
  };
}

/** `12/100 started · $0.42/$5.00 spent` — the session against its caps (for /subagents). */
export function capsSummary(caps: CapSettings, used: CapsUsed): string {
  const cost =
    caps.maxSessionCost === undefined
      ? `${usd(used.cost)} spent (no maxSessionCost)`
      : `${usd(used.cost)}/${usd(caps.maxSessionCost)} spent`;
  return `${used.spawns}/${caps.maxSpawnsPerSession} sub-agents started · ${cost}`;
}

/** Two tasks of one call that would do the same thing: same prompt (trimmed), agent, cwd, model and session. */
export function duplicateTasks(
  tasks: readonly { name: string; prompt: string; cwd: string; agent: string; model?: string; resume?: string }[],
): string | null {
  const seen = new Map<string, { name: string; index: number }>();
  for (const [index, t] of tasks.entries()) {
    const key = JSON.stringify([t.prompt.trim(), t.agent, t.cwd, t.model ?? "", t.resume ?? ""]);
    const first = seen.get(key);
    if (first) {
      return (
        `Duplicate tasks: task ${first.index + 1} ("${first.name}") and task ${index + 1} ("${t.name}") have the same prompt, ` +
        `agent (${t.agent}) and cwd; nothing was started. Drop one, or make each prompt say what differs.`
      );
    }
    seen.set(key, { name: t.name, index });
  }
  return null;
}
