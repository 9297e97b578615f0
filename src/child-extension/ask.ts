// The child's side of questions (docs/limits.md "Children that ask"). Two ways in:
//  - `ask_parent`, a tool for the child's model: {question, options?} → the answer as text;
//  - the dialogs of the child's own extensions (ctx.ui.confirm/select/input, and notify as a window line).
// In print mode (`pi -p`) pi hands every extension one shared no-op UI object (confirm → false, select/input →
// undefined). Replacing its dialog methods in place forwards them to the owner at no start-up cost; running
// children in RPC mode would give the same dialogs but change the whole transport (see docs/limits.md
// "Children that ask"). `ctx.hasUI` stays false: pi derives it from that object's identity, which an extension cannot change.
// A kept child (core/run/process/pool.ts) runs pi in RPC mode, whose UI is real but has no one at the other end
// (the pool declines every dialog): there the dialogs are forwarded too (PI_SUBAGENT_RPC=1).
import type { ChildEvent } from "../core/types.ts";
import type { Answer, ControlChannel } from "./control.ts";

type Api = {
  on(event: string, handler: (event: any, ctx: any) => unknown): void;
  registerTool(def: Record<string, unknown>): void;
};
type Kind = "confirm" | "select" | "input" | "ask_parent";
type Ask = { kind: Kind; title: string; message?: string; options?: string[] };
/** pi's dialog options: an extension may dismiss its own dialog (signal) or give it a time limit. */
type DialogOpts = { signal?: AbortSignal; timeout?: number } | undefined;

const NO_CHANNEL =
  "No answer: no one can answer now (this sub-agent has no channel to its owner). Decide yourself, go on, and state the assumption you made in your result.";
const TEXT_CAP = 4000;

export function createAsker(emit: (ev: ChildEvent) => void) {
  const waiting = new Map<string, (a: Answer) => void>();
  let channel: ControlChannel = { open: false, readWhile: () => {} };
  let seq = 0;
  const ask = (q: Ask, opts?: DialogOpts): Promise<Answer> => {
    const id = `q${++seq}`;
    if (!channel.open) return Promise.resolve({ type: "answer", id, note: NO_CHANNEL });
    if (opts?.signal?.aborted) return Promise.resolve({ type: "answer", id });
    // The asking extension gave up (its signal, its timeout): it gets no answer, and the owner closes the question.
    const giveUp = () => {
      if (!waiting.has(id)) return;
      emit({ type: "ask_closed", id });
      waiting.get(id)!({ type: "answer", id });
      waiting.delete(id);
    };
    opts?.signal?.addEventListener("abort", giveUp, { once: true });
    const limit = typeof opts?.timeout === "number" && opts.timeout > 0 ? setTimeout(giveUp, opts.timeout) : null;
    // Under Node the control pipe is unref'd and pi may be waiting on nothing else: hold the process open until
    // the answer comes (the owner always sends one: an answer, "no answer", or it stops the child).
    const keepAlive = setInterval(() => {}, 60_000);
    const answer = new Promise<Answer>((resolve) => waiting.set(id, resolve)).finally(() => {
      clearInterval(keepAlive);
      if (limit) clearTimeout(limit);
      opts?.signal?.removeEventListener("abort", giveUp);
    });
    emit({
      type: "ask",
      id,
      kind: q.kind,
      title: q.title.slice(0, TEXT_CAP),
      ...(q.message ? { message: q.message.slice(0, TEXT_CAP) } : {}),
      ...(q.options?.length ? { options: q.options.map(String) } : {}),
    });
    channel.readWhile(answer);
    return answer;
  };
  return {
    ask,
    setChannel(c: ControlChannel) {
      channel = c;
    },
    onAnswer(a: Answer) {
      const resolve = waiting.get(a.id);
      waiting.delete(a.id);
      resolve?.(a);
    },
  };
}
export type ChildAsker = ReturnType<typeof createAsker>;

/** Replaces the dialog methods of pi's no-op UI context (print mode) with forwarding ones. A UI context that is
 *  really there (an interactive or RPC pi) is left alone. */
function forwardDialogs(ui: any, asker: ChildAsker, emit: (ev: ChildEvent) => void): void {
  if (!ui || ui.__subagentForwarded) return;
  ui.__subagentForwarded = true;
  ui.confirm = async (title: string, message?: string, opts?: DialogOpts) =>
    (await asker.ask({ kind: "confirm", title: String(title ?? ""), message: message && String(message) }, opts))
      .value === true;
  ui.select = async (title: string, options: string[], opts?: DialogOpts) => {
    const a = await asker.ask(
      { kind: "select", title: String(title ?? ""), options: Array.isArray(options) ? options : [] },
      opts,
    );
    return typeof a.value === "string" ? a.value : undefined;
  };
  ui.input = async (title: string, placeholder?: string, opts?: DialogOpts) => {
    const a = await asker.ask(
      { kind: "input", title: String(title ?? ""), message: placeholder ? String(placeholder) : undefined },
      opts,
    );
    return typeof a.value === "string" ? a.value : undefined;
  };
  ui.notify = (message: string, level?: string) => {
    const text = String(message ?? "")
      .split("\n")[0]
      .slice(0, 500);
    if (text) emit({ type: "note", text: `${level === "error" ? "✗" : level === "warning" ? "⚠" : "ℹ"} ${text}` });
  };
}

export function installAsk(pi: Api, asker: ChildAsker, emit: (ev: ChildEvent) => void): void {
  // Patched as early as an extension can see a ctx, before the first prompt; hasUI true means a real UI, except
  // in a kept child.
  pi.on("session_start", (_e, ctx) => {
    if (ctx && (!ctx.hasUI || process.env.PI_SUBAGENT_RPC === "1")) forwardDialogs(ctx.ui, asker, emit);
  });
  // Offered only when someone can answer (the owner sets PI_SUBAGENT_ASK=0 otherwise): every request of the child
  // carries the definition, and a tool that can only say "no one can answer" is not worth that.
  if (process.env.PI_SUBAGENT_ASK === "0") return;
  pi.registerTool({
    name: "ask_parent",
    label: "Ask parent",
    description:
      "Ask whoever delegated this task a question you cannot answer yourself (a decision, a missing fact). Waits for the answer.",
    parameters: {
      type: "object",
      properties: { question: { type: "string" }, options: { type: "array", items: { type: "string" } } },
      required: ["question"],
      additionalProperties: false,
    },
    // pi aborts a running tool before it exits (SIGTERM: the kill protocol's first step): the question is then given
    // up at once, so a child that was asking ends as promptly as any other.
    async execute(_id: string, params: { question?: unknown; options?: unknown }, signal?: AbortSignal) {
      const question = typeof params?.question === "string" ? params.question.trim() : "";
      if (!question) throw new Error("ask_parent needs a non-empty `question`.");
      const options = Array.isArray(params.options)
        ? params.options.filter((o): o is string => typeof o === "string" && !!o.trim())
        : undefined;
      const a = await asker.ask({ kind: "ask_parent", title: question, options }, { signal });
      const text =
        a.value !== undefined
          ? `Answer: ${typeof a.value === "boolean" ? (a.value ? "yes" : "no") : a.value}`
          : (a.note ?? "No answer.");
      return { content: [{ type: "text", text }], details: { answered: a.value !== undefined } };
    },
  });
}
