// What the CLI prints about tasks: JSONL events for --json, and the final summary line (same for run and
// delegate), so scripts can always read the last line.
import { sanitize } from "../../core/sanitize.ts";
import type { TaskOutcome } from "../../core/run/task-types.ts";
import { addUsage, type ChildEvent, emptyUsage } from "../../core/types.ts";
import { overlaps } from "../../core/run/launch/isolation.ts";

export type JsonEvent = Record<string, unknown> & { type: string };

/** Live events carry the child's raw words: they are sanitized like everything else we print. */
export function jsonEvent(task: string, sessionId: string, ev: ChildEvent): JsonEvent | null {
  const e = rawEvent(task, sessionId, ev);
  if (!e) return null;
  for (const [k, v] of Object.entries(e)) if (typeof v === "string") e[k] = sanitize(v);
  return e;
}

function rawEvent(task: string, sessionId: string, ev: ChildEvent): JsonEvent | null {
  switch (ev.type) {
    case "tool_start":
      return { type: "tool_start", task, sessionId, tool: ev.name, args: ev.args };
    case "tool_end":
      return { type: "tool_end", task, sessionId, tool: ev.name, isError: ev.isError };
    case "assistant":
      return {
        type: "message",
        task,
        sessionId,
        text: ev.text,
        toolCalls: ev.toolCalls.map((c) => c.name),
        stopReason: ev.stopReason,
        error: ev.errorMessage,
      };
    case "retry":
      return {
        type: "retry",
        task,
        sessionId,
        attempt: ev.attempt,
        maxAttempts: ev.maxAttempts,
        error: ev.errorMessage,
      };
    case "finalize":
      return { type: "finalize", task, sessionId, status: ev.payload.status };
    case "rate_limit":
      return { type: "rate_limit", task, sessionId, status: ev.status, retryAfterMs: ev.retryAfterMs };
    // A sibling's message reached this task's model ("message" is taken: the model's own messages).
    case "message_in":
      return { type: "sibling_message", task, sessionId, from: ev.from, to: ev.to, text: ev.text };
    default:
      return null;
  }
}

/** A skipped task is recorded as an error with code SKIPPED; scripts see its own status. */
const shownStatus = (r: TaskOutcome["result"]) => (r.errorCode === "SKIPPED" ? "skipped" : r.status);

export function taskEndEvent(o: TaskOutcome): JsonEvent {
  const r = o.result;
  return {
    type: "task_end",
    task: o.name,
    sessionId: o.sessionId,
    status: shownStatus(r),
    finalized: r.finalized ?? false,
    error: r.error,
    errorCode: r.errorCode,
    usage: r.usage,
    durationMs: r.durationMs,
    ...(r.model ? { model: r.model } : {}),
    ...(r.warnings?.length ? { warnings: r.warnings } : {}),
    ...(r.gate ? { gate: r.gate } : {}),
    ...(r.structured !== undefined ? { structured: r.structured } : {}),
    ...(r.recordError ? { recordError: r.recordError } : {}),
  };
}

export function summaryEvent(outcomes: TaskOutcome[]): JsonEvent {
  return {
    type: "summary",
    tasks: outcomes.map((o) => ({
      name: o.name,
      sessionId: o.sessionId,
      agent: o.agent,
      status: shownStatus(o.result),
      finalized: o.result.finalized ?? false,
      output: o.result.output,
      ...(o.result.error !== undefined ? { error: o.result.error } : {}),
      ...(o.result.errorCode !== undefined ? { errorCode: o.result.errorCode } : {}),
      ...(o.result.warnings?.length ? { warnings: o.result.warnings } : {}),
      ...(o.result.isolation ? { isolation: o.result.isolation } : {}),
      ...(o.result.gate ? { gate: o.result.gate } : {}),
      ...(o.result.structured !== undefined ? { structured: o.result.structured } : {}),
      usage: o.result.usage,
      durationMs: o.result.durationMs,
      ...(o.result.model ? { model: o.result.model } : {}),
      ...(o.result.recordError ? { recordError: o.result.recordError } : {}),
    })),
    // What the call spent in all (the figures its trace's invoke_workflow span carries).
    usage: outcomes.reduce((sum, o) => addUsage(sum, o.result.usage), emptyUsage()),
    ...(outcomes.some((o) => o.result.isolation) ? { overlaps: overlaps(outcomes) } : {}),
  };
}

export function writeJson(ev: JsonEvent): void {
  process.stdout.write(`${JSON.stringify(ev)}\n`);
}
