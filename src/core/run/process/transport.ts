// Turns a child's output lines into engine events, for both transports.
//  - compact: our child extension writes ChildEvent JSON lines on fd 3 (small, one per event).
//  - json:    pi's own `--mode json` stdout. Its message_update lines carry the whole message so far, so they
//             are classified by their prefix and only the delta is cut out; they are never JSON.parsed.
import type { ChildEvent, FinalizePayload } from "../../types.ts";
import { NUDGE_TEXT } from "./finalize-contract.ts";

export type Transport = "compact" | "json";

export const MAX_EVENT_LINE = 16 * 1024 * 1024;
/** The most characters of one answer (or finalize result) a run keeps: the output bound of docs/limits.md. */
export const OUTPUT_CHARS = 4 * 1024 * 1024;
/** What one event's text may take of its line, JSON-encoded: the rest is room for the event's other fields. */
const TEXT_ROOM = MAX_EVENT_LINE - 256 * 1024;

/** A child's long text, cut where the parent would cut it anyway (OUTPUT_CHARS) and so that its JSON encoding fits
 *  one event line (control characters encode as six): null when it fits as it is. A line over the limit would be
 *  dropped whole, and the answer with it. */
export function cutText(text: string): string | null {
  if (text.length <= OUTPUT_CHARS && text.length * 6 < TEXT_ROOM) return null;
  let head = text.slice(0, OUTPUT_CHARS);
  for (let encoded = JSON.stringify(head).length; encoded > TEXT_ROOM; encoded = JSON.stringify(head).length)
    head = head.slice(0, Math.floor((head.length * TEXT_ROOM * 0.95) / encoded));
  return head.length < text.length ? head : null;
}

/** An assistant event whose text fits one line (cutText), saying how long the whole answer was. */
export function fitAssistant(ev: Extract<ChildEvent, { type: "assistant" }>): ChildEvent {
  const head = cutText(ev.text);
  return head === null ? ev : { ...ev, text: head, cut: { of: ev.text.length } };
}

/** A finalize event whose result fits one line (cutText), saying how long the whole result was. */
export function fitFinalize(payload: FinalizePayload): ChildEvent {
  const head = payload.result === undefined ? null : cutText(payload.result);
  return head === null
    ? { type: "finalize", payload }
    : { type: "finalize", payload: { ...payload, result: head }, cut: { of: payload.result!.length } };
}
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
export function assistantFromMessage(m: Msg): Extract<ChildEvent, { type: "assistant" }> {
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

/** What a message_end line cut at the line limit still says: the first text of an assistant's answer, as far as the
 *  line came. Its usage, stop reason and tool calls were at the end that is gone. */
function salvageAnswer(line: string): ChildEvent | null {
  const head = line.slice(0, 4096);
  if (!head.includes('"role":"assistant"')) return null;
  const at = line.indexOf('"text":"');
  if (at === -1) return null;
  // The string was cut somewhere inside: close it, dropping the last characters until it parses (a cut escape).
  for (let end = line.length; end > line.length - 8 && end > at + 7; end--) {
    try {
      const text = JSON.parse(`${line.slice(at + 7, end)}"`) as string;
      return { ...assistantFromMessage({ role: "assistant" }), text, cut: {} };
    } catch {
      // a cut escape sequence: one character less
    }
  }
  return null;
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

  /** `cut`: the line was longer than MAX_EVENT_LINE and this is its head. */
  parse(line: string, cut = false): ChildEvent | null {
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
    // Lines above are known by their head (agent_end's is kept short on purpose); a cut one past here is not JSON.
    if (cut) return line.startsWith('{"type":"message_end"') ? salvageAnswer(line) : null;
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
