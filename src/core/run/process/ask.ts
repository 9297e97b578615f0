// Questions a child asks its owner (docs/limits.md "Children that ask"): our `ask_parent` tool and the child's own extensions' dialogs
// (confirm, select, input), forwarded over fd 3 and answered over the control pipe. This file holds what the
// owner side decides without any UI: who may be asked (`subagents.ask`), how long a child may wait
// (`subagents.askTimeout`), what a child is told when nobody answers, and the warning that records it.
import type { Clock } from "../../host.ts";

export type AskKind = "confirm" | "select" | "input" | "ask_parent";
export type Question = { id: string; kind: AskKind; title: string; message?: string; options?: string[] };
/** A question on its way to a person: which task asks, and a signal that closes the dialog (answered elsewhere,
 *  timed out, the run aborted). */
export type AskRequest = Question & { sessionId: string; label: string; signal: AbortSignal };
export type NoAnswer = "nobody" | "dismissed" | "timeout" | "denied" | "ended" | "withdrawn";
export type AskAnswer = { value: string | boolean } | { none: NoAnswer };
/** Whoever can answer for this owner (a pi dialog, the CLI's terminal, a remote `subagents answer`). Resolves
 *  { none: "nobody" } at once when no one can. */
export type Asker = (q: AskRequest) => Promise<AskAnswer>;
export type AskMode = "auto" | "deny";

export const DEFAULT_ASK_TIMEOUT_SEC = 600;

/** One line naming what is asked: `Allow bash? rm -rf build`, `Which design? (a | b)`. */
export function questionText(q: Pick<Question, "title" | "message" | "options">): string {
  const body = [q.title.trim(), q.message?.trim()].filter(Boolean).join(" ");
  return q.options?.length ? `${body} (${q.options.join(" | ")})` : body;
}

const WHY: Record<NoAnswer, string> = {
  nobody: "no one can answer now",
  dismissed: "the question was dismissed without an answer",
  timeout: "no answer came in time",
  denied: "questions are turned off (subagents.ask = deny)",
  ended: "the run ended before an answer came",
  withdrawn: "the asking extension stopped waiting",
};

/** What ask_parent returns when nobody answers: the child goes on, and says what it assumed. */
export function noAnswerText(why: NoAnswer): string {
  return `No answer: ${WHY[why]}. Decide yourself, go on, and state the assumption you made in your result.`;
}

export function answerText(a: AskAnswer): string {
  if ("none" in a) return `(no answer: ${WHY[a.none]})`;
  return typeof a.value === "boolean" ? (a.value ? "yes" : "no") : a.value;
}

/** The warning a task records for a question nobody answered (its text, and what the child was told). */
export function unansweredWarning(q: Question, why: NoAnswer): string {
  const told = q.kind === "confirm" ? "no" : q.kind === "ask_parent" ? "decide yourself" : "nothing";
  return `unanswered question (${WHY[why]}; the child got "${told}"): ${questionText(q)}`;
}

/** The control line that carries an answer back to the child. A select's value must be one of its options. */
export function answerLine(q: Question, a: AskAnswer): string {
  if ("none" in a) return JSON.stringify({ type: "answer", id: q.id, note: noAnswerText(a.none) });
  let value: string | boolean = a.value;
  if (q.kind === "confirm")
    value = value === true || (typeof value === "string" && /^(y|yes|true|ok|allow)$/i.test(value.trim()));
  else if (typeof value === "boolean") value = value ? "yes" : "no";
  if (q.kind === "select" && q.options?.length && !q.options.includes(value as string)) {
    const hit = q.options.find((o) => o.toLowerCase() === String(value).trim().toLowerCase());
    if (!hit) return JSON.stringify({ type: "answer", id: q.id, note: noAnswerText("dismissed") });
    value = hit;
  }
  return JSON.stringify({ type: "answer", id: q.id, value });
}

export type AskBrokerOptions = {
  asker?: Asker;
  mode: AskMode;
  timeoutSec: number;
  clock: Clock;
  sessionId: string;
  label: string;
  /** The run's abort signal: closes every open question. */
  signal?: AbortSignal;
  /** A readable line for the child's window (the question, then its answer). */
  onActivity?: (line: string) => void;
};

/** One child's questions across its attempts: asks, times out, answers over the current control pipe, and keeps the
 *  warnings of those nobody answered. */
export function askBroker(o: AskBrokerOptions) {
  const open = new Map<string, { ac: AbortController; q: Question }>();
  const warnings: string[] = [];
  const broker = {
    warnings,
    /** When the last answer came: the idle timeout counts from then. */
    lastAnswerAt: 0,
    /** Questions waiting for an answer: the child counts as active while there are any (bounded by askTimeout). */
    pending: () => open.size,
    handle(q: Question, send: ((line: string) => boolean) | null): void {
      if (open.has(q.id)) return;
      const reply = (a: AskAnswer) => {
        if (!open.has(q.id)) return;
        open.get(q.id)!.ac.abort();
        open.delete(q.id);
        broker.lastAnswerAt = o.clock.now();
        if ("none" in a) warnings.push(unansweredWarning(q, a.none));
        o.onActivity?.(`↩ answer: ${answerText(a)}`);
        send?.(answerLine(q, a));
      };
      const ac = new AbortController();
      open.set(q.id, { ac, q });
      o.onActivity?.(`? asks: ${questionText(q)}`);
      if (!send) return reply({ none: "nobody" });
      if (o.mode === "deny") return reply({ none: "denied" });
      if (!o.asker) return reply({ none: "nobody" });
      if (o.signal?.aborted) return reply({ none: "ended" });
      const timer = o.clock.setTimeout(() => reply({ none: "timeout" }), Math.max(0, o.timeoutSec) * 1000);
      ac.signal.addEventListener("abort", () => o.clock.clearTimeout(timer), { once: true });
      const signal = o.signal ? AbortSignal.any([o.signal, ac.signal]) : ac.signal;
      o.asker({ ...q, sessionId: o.sessionId, label: o.label, signal }).then(reply, () => reply({ none: "nobody" }));
    },
    /** The child withdrew one question (its extension's own timeout or signal): close its dialog, answer nothing. */
    close(id: string): void {
      const open1 = open.get(id);
      if (!open1) return;
      open1.ac.abort();
      open.delete(id);
      broker.lastAnswerAt = o.clock.now();
      warnings.push(unansweredWarning(open1.q, "withdrawn"));
      o.onActivity?.(`↩ answer: (no answer: ${WHY.withdrawn})`);
    },
    /** The child is gone or being stopped: nobody will read an answer now. */
    closeAll(why: NoAnswer = "ended"): void {
      for (const [id, { ac, q }] of [...open]) {
        ac.abort();
        open.delete(id);
        warnings.push(unansweredWarning(q, why));
      }
    },
  };
  return broker;
}
export type AskBroker = ReturnType<typeof askBroker>;
