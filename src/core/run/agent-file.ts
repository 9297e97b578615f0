// A resolved task's agent (core/call/resolve.ts): its file, looked up by its canonical name, or why it has none.
// DEFAULT_AGENT has no file: it is pi's own defaults.
import type { Profile } from "../profiles/profile.ts";
import type { Engine } from "./engine.ts";
import { profileRefusal } from "./task-error.ts";
import { DEFAULT_AGENT } from "./task-types.ts";
import type { ErrorCode } from "../types.ts";

/** The agent file a resolved agent names (none for DEFAULT_AGENT). */
export const agentFile = (engine: Pick<Engine, "profiles">, agent: string): Profile | undefined =>
  agent === DEFAULT_AGENT ? undefined : engine.profiles.get(agent);

/** Why a task's agent cannot run: its file is not loaded (unknown, or refused with why). That task fails alone. */
export function agentRefusal(
  engine: Pick<Engine, "profiles" | "profileProblems">,
  agent: string,
): { code: ErrorCode; message: string } | undefined {
  if (agent === DEFAULT_AGENT || engine.profiles.has(agent)) return undefined;
  const { code, message } = profileRefusal(engine, agent);
  return { code, message };
}
