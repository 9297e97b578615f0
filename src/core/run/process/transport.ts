// Turns a child's output lines into engine events, for both transports.
//  - compact: our child extension writes ChildEvent JSON lines on fd 3 (small, one per event).
//  - json:    pi's own `--mode json` stdout. Its message_update lines carry the whole message so far, so they
//             are classified by their prefix and only the delta is cut out; they are never JSON.parsed.
import type { ChildEvent, FinalizePayload } from "../../types.ts";
import { NUDGE_TEXT } from "./finalize-contract.ts";

export type Transport = "compact" | "json";

export const MAX_EVENT_LINE = 16 * 1024 * 1024;
/** How much of a JSON-mode line of each kind is worth keeping (the rest is dropped unread). */
export function jsonModeKeep(head: string): number {
  if (head.startsWith('{"type":"message_update"')) return 64 * 1024;
  if (head.startsWith('{"type":"agent_end"') || head.startsWith('{"type":"turn_end"')) return 256;
  if (head.startsWith('{"type":"tool_execution_update"') || head.startsWith('{"type":"message_start"')) return 256;
  return MAX_EVENT_LINE;
}

const KNOWN = new Set([
  "session",
  "turn_start",
  "text",
  "tool_start",
  "tool_end",
  "assistant",
  "retry",
  "finalize",
  "nudge",
  "agent_end",
  "settled",
  "steered",
  "rate_limit",
  "gate_start",
  "gate",
  "ask",
  "ask_closed",
  "note",
  "message_send",
  "message_in",
]);

export function parseCompactLine(line: string): ChildEvent | null {
  if (!line.startsWith("{")) return null;
  try {
    const ev = JSON.parse(line) as ChildEvent;
    return ev && typeof ev === "object" && KNOWN.has(ev.type) ? ev : null;
  } catch {
    return null;
  }
}

export const cap = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n)}…(+${s.length - n})` : s);
export const stringify = (v: unknown): string => {
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
};

type Part = { type?: string; text?: string; name?: string; id?: string; arguments?: unknown };
type Msg = {
  role?: string;
  content?: unknown;
  usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; cost?: { total?: number } };
  model?: string;
  provider?: string;
  stopReason?: string;
  errorMessage?: string;
};

function parts(content: unknown): Part[] {
  if (Array.isArray(content)) return content as Part[];
  return typeof content === "string" ? [{ type: "text", text: content }] : [];
}

export function textOfContent(content: unknown): string {
  return parts(content)
    .filter((p) => p.type === "text" && typeof p.text === "string")
    .map((p) => p.text)
    .join("");
}

/** The engine's view of a finished assistant message (shared by both transports). */
export function assistantFromMessage(m: Msg): ChildEvent {
  const u = m.usage ?? {};
  return {
    type: "assistant",
    text: textOfContent(m.content),
    toolCalls: parts(m.content)
      .filter((p) => p.type === "toolCall")
      .map((p) => ({
        id: String(p.id ?? ""),
        name: String(p.name ?? ""),
        args: cap(stringify(p.arguments ?? {}), 1000),
      })),
    usage: {
      input: u.input ?? 0,
      output: u.output ?? 0,
      cacheRead: u.cacheRead ?? 0,
      cacheWrite: u.cacheWrite ?? 0,
      cost: u.cost?.total ?? 0,
    },
    model: m.model,
    provider: m.provider,
    stopReason: m.stopReason,
    errorMessage: m.errorMessage,
  };
}

/** Reads the JSON string literal that starts at `at` (which points at the opening quote). */
function readJsonString(line: string, at: number): string | null {
  let i = at + 1;
  while (i < line.length) {
    const c = line.charCodeAt(i);
    if (c === 92 /* \ */) i += 2;
    else if (c === 34 /* " */) break;
    else i++;
  }
  try {
    return JSON.parse(line.slice(at, Math.min(i + 1, line.length))) as string;
  } catch {
    return null;
  }
}

const DELTA_PREFIX = '{"type":"message_update","assistantMessageEvent":{"type":"text_delta"';

/**
 * Stateful because pi's JSON mode reports tool_execution_start for the finalize tool (with its arguments)
 * and only later whether it succeeded.
 */
export class JsonModeParser {
  private pendingFinalize = new Map<string, FinalizePayload>();
  /** One parser per process: its first user message is the task from stdin, later ones are follow-ups. */
  private sawPrompt = false;

  parse(line: string): ChildEvent | null {
    if (line.startsWith(DELTA_PREFIX)) {
      const at = line.indexOf('"delta":"', DELTA_PREFIX.length);
      if (at === -1) return null;
      const delta = readJsonString(line, at + 8);
      return delta ? { type: "text", delta } : null;
    }
    if (line.startsWith('{"type":"message_update"') || line.startsWith('{"type":"message_start"')) return null;
    if (line.startsWith('{"type":"agent_end"')) return { type: "agent_end" };
    if (line.startsWith('{"type":"agent_settled"')) return { type: "settled" };
    if (line.startsWith('{"type":"turn_start"')) return { type: "turn_start" };
    if (line.startsWith('{"type":"turn_end"') || line.startsWith('{"type":"tool_execution_update"')) return null;
    let ev: Record<string, any>;
    try {
      ev = JSON.parse(line);
    } catch {
      return null;
    }
    switch (ev?.type) {
      case "session":
        return { type: "session", id: String(ev.id ?? "") };
      case "message_end":
        if (ev.message?.role === "user") {
          const first = !this.sawPrompt;
          this.sawPrompt = true;
          return !first && textOfContent(ev.message.content) === NUDGE_TEXT ? { type: "nudge" } : null;
        }
        return ev.message?.role === "assistant" ? assistantFromMessage(ev.message) : null;
      case "tool_execution_start":
        if (ev.toolName === "subagent_finalize") this.pendingFinalize.set(String(ev.toolCallId), ev.args ?? {});
        return {
          type: "tool_start",
          id: String(ev.toolCallId),
          name: String(ev.toolName),
          args: cap(stringify(ev.args ?? {}), 1000),
        };
      case "tool_execution_end": {
        const id = String(ev.toolCallId);
        const payload = this.pendingFinalize.get(id);
        this.pendingFinalize.delete(id);
        if (payload && !ev.isError) return { type: "finalize", payload };
        return {
          type: "tool_end",
          id,
          name: String(ev.toolName),
          isError: !!ev.isError,
          result: cap(textOfContent(ev.result?.content), 2000),
        };
      }
      case "auto_retry_start":
        return {
          type: "retry",
          attempt: ev.attempt ?? 0,
          maxAttempts: ev.maxAttempts ?? 0,
          delayMs: ev.delayMs ?? 0,
          errorMessage: String(ev.errorMessage ?? ""),
        };
      default:
        return null;
    }
  }
}
