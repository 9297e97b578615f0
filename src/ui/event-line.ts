// One readable line per meaningful child event (tool calls and results, the model's messages, steers, retries,
// finalize): what `subagents logs` writes and what `subagents attach` prints when its output is not a terminal.
import { rateLimitLine, retryLine, toolCallLine, toolResultLine } from "../core/run/process/activity.ts";
import type { ChildEvent } from "../core/types.ts";
import { messageLine } from "../core/team.ts";

export function eventLine(ev: ChildEvent): string | null {
  switch (ev.type) {
    case "tool_start":
      return ev.name === "subagent_finalize" ? null : `→ ${toolCallLine(ev.name, ev.args)}`;
    case "tool_end":
      return toolResultLine(ev.name, ev.result, ev.isError);
    case "assistant":
      if (ev.errorMessage) return `✗ model error: ${ev.errorMessage}`;
      return ev.text.trim() ? ev.text.trim() : null;
    case "retry":
      return retryLine(ev);
    case "steered":
      return `↪ steer: ${ev.text}`;
    case "note":
      return ev.text;
    case "message_in":
      return messageLine(ev.from, ev.to, ev.text);
    case "rate_limit":
      return rateLimitLine(ev.status, ev.retryAfterMs);
    case "finalize":
      return `■ finalize: ${ev.payload.status}`;
    default:
      return null;
  }
}
