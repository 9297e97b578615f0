// How a task fails before (or without) a child: a TaskError a stage throws, the failed RunResult it becomes, and
// the refusal of a profile that is not loaded.
import { sanitize } from "../sanitize.ts";
import { runResult, type ErrorCode, type RunResult } from "../types.ts";
import type { Profile } from "../profiles/profile.ts";
import { brokenProfile } from "../profiles/profile-discovery.ts";
import type { Engine } from "./engine.ts";

export class TaskError extends Error {
  constructor(
    message: string,
    readonly code: ErrorCode,
    /** A task refused before it started (its agent, the call's decision) is told to its hooks, like any end. */
    readonly tellHooks = false,
  ) {
    super(message);
  }
}

/** A task that ended before or without a child. Its message can name files (a profile, a cwd): masked like all. */
export function failedResult(message: string, code: ErrorCode): RunResult {
  return runResult({ status: "error", error: sanitize(message), errorCode: code, finalized: false });
}

/** A task names a profile that is not loaded: refused (and why), or unknown (`Unknown profile: …`). */
export function profileRefusal(engine: Pick<Engine, "profiles" | "profileProblems">, name: string): TaskError {
  const broken = brokenProfile(engine.profileProblems, name);
  if (broken)
    return new TaskError(`Profile "${name}" (${broken.file}) cannot be used: ${broken.reason}`, "INVALID_INPUT", true);
  return new TaskError(unknownProfile(name, engine.profiles), "UNKNOWN_AGENT", true);
}

export function unknownProfile(name: string, profiles: Map<string, Profile>): string {
  const names = [...profiles.keys()].sort();
  return `Unknown profile: "${name}". Available profiles: ${names.length ? names.join(", ") : "(none)"}`;
}
