// A child's question (its `ask_parent`, an extension's confirm/select/input) as an MCP elicitation, and the
// client's response as the child's answer (docs/limits.md "Children that ask"). The form is one field, `answer`:
// a yes/no box for a confirm, a choice when the question names options, text otherwise. Declined, cancelled or malformed responses
// become "dismissed": the child goes on and says what it assumed.
import { questionText, type AskAnswer, type AskRequest } from "../core/run/process/ask.ts";
import { elicit } from "./protocol/wire.ts";

type Field =
  | { type: "boolean"; title: string }
  | { type: "string"; title: string }
  | { type: "string"; title: string; enum: string[] };

function answerField(q: AskRequest): Field {
  if (q.kind === "confirm") return { type: "boolean", title: q.title.trim() || "Allow?" };
  // A select's choices, and the options an ask_parent names, are the form's choices.
  if (q.options?.length) return { type: "string", title: "Choose", enum: [...q.options] };
  return { type: "string", title: "Answer" };
}

/** The embedded request an `input_required` result carries for one question. */
export function elicitation(q: AskRequest) {
  return elicit(`Sub-agent ${q.label} (session ${q.sessionId}) asks: ${questionText(q)}`, {
    type: "object",
    properties: { answer: answerField(q) },
    required: ["answer"],
  });
}

/** The child's answer from the client's response to that request. */
export function answerOf(response: unknown): AskAnswer {
  const r = response as { action?: unknown; content?: { answer?: unknown } } | null;
  const value = r?.content?.answer;
  if (r?.action !== "accept" || (typeof value !== "string" && typeof value !== "boolean")) return { none: "dismissed" };
  return { value };
}
