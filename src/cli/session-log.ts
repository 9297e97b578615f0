// A background session's readable event log, `<data dir>/logs/<session>.log`: what `subagents logs ID [-f]`
// shows while nobody watches its window. One line per meaningful event, sanitized like everything we print.
import * as fs from "node:fs";
import * as path from "node:path";
import { rateLimitLine, toolCallLine, toolResultLine } from "../core/run/activity.ts";
import { statusLine } from "../core/run/outcome-text.ts";
import type { TaskOutcome } from "../core/run/task.ts";
import { sanitize } from "../core/sanitize.ts";
import type { ChildEvent } from "../core/types.ts";

export const sessionLogPath = (data: string, id: string) => path.join(data, "logs", `${id}.log`);

function eventLine(ev: ChildEvent): string | null {
  switch (ev.type) {
    case "tool_start":
      return ev.name === "subagent_finalize" ? null : `→ ${toolCallLine(ev.name, ev.args)}`;
    case "tool_end":
      return toolResultLine(ev.name, ev.result, ev.isError);
    case "assistant":
      if (ev.errorMessage) return `✗ model error: ${ev.errorMessage}`;
      return ev.text.trim() ? ev.text.trim() : null;
    case "retry":
      return `↻ retry ${ev.attempt}/${ev.maxAttempts}: ${ev.errorMessage}`;
    case "steered":
      return `↪ steer: ${ev.text}`;
    case "rate_limit":
      return rateLimitLine(ev.status, ev.retryAfterMs);
    case "finalize":
      return `■ finalize: ${ev.payload.status}`;
    default:
      return null;
  }
}

export function appendEvent(file: string, ev: ChildEvent): void {
  const line = eventLine(ev);
  if (line) append(file, line);
}

export function appendEnd(file: string, o: TaskOutcome): void {
  append(file, statusLine(o));
}

function append(file: string, line: string): void {
  try {
    fs.appendFileSync(file, `${new Date().toISOString().slice(11, 19)} ${sanitize(line)}\n`);
  } catch {
    // a log is a convenience: never let it stop a run
  }
}
