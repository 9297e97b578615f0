// The one object a task's start and end are told with: on a hook's stdin (core/run/task-hooks.ts) and, in pi, on pi.events
// (`subagents:task_start` / `subagents:task_end`). The same fields whoever listens.
import type { HookEvent } from "../../hook-settings.ts";
import { emptyUsage, type ErrorCode, type RunResult, type Usage } from "../../types.ts";

/** Enough of a task's output to post or page with; the whole of it is in the store (`subagents output ID`). */
export const HOOK_OUTPUT_LIMIT = 4096;

export type TaskEventPayload = {
  event: HookEvent;
  sessionId: string;
  name: string;
  agent: string;
  /** "running" at the start; the run's recorded status at the end. */
  status: "running" | "completed" | "error";
  error?: string;
  errorCode?: ErrorCode;
  /** The task's output, cut at HOOK_OUTPUT_LIMIT characters (outputTruncated says so). */
  output: string;
  outputTruncated?: boolean;
  usage: Usage;
  cwd: string;
  /** The schedule that started the run (`subagents schedule`), when one did. */
  schedule?: string;
};

export type TaskIdentity = { sessionId: string; name: string; agent: string; cwd: string; schedule?: string };

export function startPayload(who: TaskIdentity): TaskEventPayload {
  return { event: "taskStart", ...who, status: "running", output: "", usage: emptyUsage() };
}

export function endPayload(who: TaskIdentity, result: RunResult): TaskEventPayload {
  const cut = result.output.length > HOOK_OUTPUT_LIMIT;
  return {
    event: "taskEnd",
    ...who,
    status: result.status,
    ...(result.error ? { error: result.error } : {}),
    ...(result.errorCode ? { errorCode: result.errorCode } : {}),
    output: cut ? result.output.slice(0, HOOK_OUTPUT_LIMIT) : result.output,
    ...(cut ? { outputTruncated: true } : {}),
    usage: result.usage,
  };
}
