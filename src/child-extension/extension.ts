// Loaded into every child pi with `-e`. Two jobs:
//  1. the compact transport: one small JSON line per meaningful event on fd 3 (instead of pi's JSON mode,
//     whose message_update lines repeat the whole message on every delta);
//  2. the `subagent_finalize` tool, registered only in children (PI_SUBAGENT_CHILD=1), and with the required
//     contract the corrective messages, queued as pi follow-ups so they reach the model in this same process.
// It also stops the child when the parent disappears, so a killed parent never leaves orphans running.
// Self-contained on purpose: node:fs only, no package imports (Bun would try to auto-install them).
import * as fs from "node:fs";
import { finalizeProblem, MAX_NUDGES, NUDGE_TEXT } from "../core/run/process/finalize-contract.ts";
import {
  assistantFromMessage,
  cap,
  cutText,
  fitAssistant,
  fitFinalize,
  OUTPUT_CHARS,
  stringify as json,
  textOfContent,
} from "../core/run/process/transport.ts";
import { setNormalJitPolicy } from "../host/jit-policy.ts";
import { listenForControl } from "./control.ts";
import { watchRateLimits } from "./rate-limit.ts";
import { endGates, gateFromEnv, gatePlainEndings } from "./gate.ts";
import { reportRetries } from "./retries.ts";
import { finalizeParameters, withData } from "./finalize-data.ts";
import { createAsker, installAsk } from "./ask.ts";
import { guardModel } from "./model-guard.ts";
import { installForkPrompt } from "./fork-prompt.ts";
import { createMessenger, installMessageTool } from "./message.ts";
import type { ChildEvent, FinalizePayload } from "../core/types.ts";
import { MARK_ENV, sessionMark } from "../core/run/process/marks.ts";
import { sessionIdOfFile } from "../core/run/session-file.ts";
import { sessionTraceparent } from "../core/trace/context.ts";
import { ownerGoneThen, processMark, watchParent } from "./owner-gone.ts";

const FD = 3;
const ARGS_CAP = 1000;
const RESULT_CAP = 2000;
const FLUSH_MS = 50;
const DELTA_FLUSH_BYTES = 8192;
/** Past OUTPUT_CHARS of one answer, each flush sends only its last characters: the parent keeps the answer's first
 *  OUTPUT_CHARS and shows a tail of this size; every byte more would only count against its event limit. */
const STREAM_TAIL = 4096;

type Api = {
  on(event: string, handler: (event: any, ctx: any) => unknown): void;
  registerTool(def: Record<string, unknown>): void;
  getAllTools(): { name: string }[];
  setActiveTools(names: string[]): void;
  /** pi ≥ 0.73: with deliverAs "followUp" the message is taken up before the agent loop would end. */
  sendUserMessage(content: string, options?: { deliverAs?: "steer" | "followUp" }): void;
};

class Fd3Writer {
  private open = true;
  private delta = "";
  /** Characters of the answer being streamed, sent or pending. */
  private streamed = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly onBroken: () => void) {}

  emit(ev: ChildEvent): void {
    if (ev.type === "text") {
      const sent = this.streamed - this.delta.length;
      this.streamed += ev.delta.length;
      this.delta += ev.delta;
      if (sent >= OUTPUT_CHARS && this.delta.length > STREAM_TAIL) this.delta = this.delta.slice(-STREAM_TAIL);
      if (this.delta.length >= DELTA_FLUSH_BYTES) this.flushDelta();
      else if (!this.timer) {
        // Coalesce deltas: the parent redraws at most 10×/s, so per-token lines would be wasted bytes.
        this.timer = setTimeout(() => this.flushDelta(), FLUSH_MS);
        this.timer.unref?.();
      }
      return;
    }
    this.flushDelta();
    if (ev.type === "assistant" || ev.type === "turn_start") this.streamed = 0;
    this.write(ev);
  }

  flushDelta(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.delta) return;
    // One delta can be longer than an event line (a model that sends its answer in one piece): what fits is
    // streamed, and the answer itself arrives whole with its usage in the assistant event (fitAssistant).
    const delta = cutText(this.delta) ?? this.delta;
    this.delta = "";
    this.write({ type: "text", delta });
  }

  private write(ev: ChildEvent): void {
    if (!this.open) return;
    const buf = Buffer.from(`${JSON.stringify(ev)}\n`);
    let off = 0;
    let spins = 0;
    while (off < buf.length) {
      try {
        off += fs.writeSync(FD, buf, off);
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === "EAGAIN" && spins++ < 5000) {
          // A non-blocking pipe is full: the parent is draining, so wait a moment (synchronously: order matters).
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
          continue;
        }
        this.open = false;
        if (code === "EPIPE") this.onBroken();
        return;
      }
    }
  }
}

/** How long a child whose owner is gone waits for pi's own SIGTERM handling before it exits anyway. */
const OWNER_GONE_EXIT_MS = 5000;

export default function childExtension(pi: Api): void {
  if (process.env.PI_SUBAGENT_CHILD !== "1") return;
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    // SIGTERM to ourselves: pi's handler kills the bash process groups it started, then exits — and if something
    // holds it past the kill protocol's grace, this process ends anyway (its exit handlers end what is left).
    process.kill(process.pid, "SIGTERM");
    setTimeout(() => process.exit(1), OWNER_GONE_EXIT_MS).unref?.();
  };
  // A broken fd 3 also means the owner is gone (killed while the child was reporting): the same way out. A gate
  // running then is ended first, and no other starts (its end would count as a failed attempt).
  const ownerGoneNow = ownerGoneThen(stop);
  const ownerGone = () => {
    endGates();
    ownerGoneNow();
  };
  watchParent(ownerGone);
  // A kept child runs one task per session: that task's commands carry a mark of their own, so what one task leaves
  // is found (and ended) before the next task starts in this process (core/run/process/pool.ts).
  const mark = processMark();
  if (mark && process.env.PI_SUBAGENT_RPC === "1") {
    pi.on("session_start", (_e, ctx) => {
      const file = ctx?.sessionManager?.getSessionFile?.();
      if (typeof file !== "string") return;
      process.env[MARK_ENV] = sessionMark(mark, file);
      // A traced call: the task's commands continue the trace under its own invoke_agent span, named from its
      // session as the owner names it (the process started with the first task's).
      const traced =
        process.env.PI_SUBAGENT_TRACED === "1" && sessionTraceparent(process.env.TRACEPARENT, sessionIdOfFile(file));
      if (traced) process.env.TRACEPARENT = traced;
    });
  }
  guardModel(pi);
  // The pi role starts with the JIT held back (start-up code runs once); the model loop is the long part.
  let jitRestored = false;
  pi.on("turn_end", () => {
    if (jitRestored) return;
    jitRestored = true;
    setNormalJitPolicy();
  });
  // Our additions to the system prompt (finalize contract, inlined skills, an append-mode profile), after
  // everything pi assembled — including the user's APPEND_SYSTEM.md, which --append-system-prompt would replace.
  const appendFile = process.env.PI_SUBAGENT_APPEND_PROMPT;
  let appended = "";
  try {
    if (appendFile) appended = fs.readFileSync(appendFile, "utf8");
  } catch {
    // gone already: nothing to add
  }
  if (appended.trim())
    pi.on("before_agent_start", (e) => ({ systemPrompt: `${e?.systemPrompt ?? ""}\n\n${appended}` }));
  // A cache-true fork sends its parent's tools and system prompt instead (fork-prompt.ts).
  installForkPrompt(pi);
  // pi ≥ 0.8x skips a folder's .pi settings/extensions/skills in -p mode unless trusted: carry the parent's decision.
  const trust = process.env.PI_SUBAGENT_PROJECT_TRUST;
  if (trust === "yes" || trust === "no") pi.on("project_trust", () => ({ trusted: trust }));
  const compact = process.env.PI_SUBAGENT_TRANSPORT !== "json";
  const out = compact ? new Fd3Writer(ownerGone) : null;
  const emit = (ev: ChildEvent) => out?.emit(ev);
  // pi's retries of a failed model request (the window's `↻ retry 2/3 in 4s — …`).
  reportRetries(emit);
  // Questions to the owner: ask_parent and the child's own extensions' dialogs (ask.ts).
  const asker = createAsker(emit);
  installAsk(pi, asker, emit);

  if (out) {
    // The first user message of a process is its task from stdin (or the runner's fallback nudge): only the
    // corrective messages queued inside this process are reported, so none is counted twice.
    let sawPrompt = false;
    pi.on("session_start", (_e, ctx) => {
      const sm = ctx?.sessionManager;
      emit({ type: "session", id: String(sm?.getSessionId?.() ?? ""), file: sm?.getSessionFile?.() ?? undefined });
    });
    pi.on("turn_start", () => emit({ type: "turn_start" }));
    pi.on("message_update", (e) => {
      const a = e?.assistantMessageEvent;
      if (a?.type === "text_delta" && typeof a.delta === "string") emit({ type: "text", delta: a.delta });
    });
    pi.on("message_end", (e) => {
      if (e?.message?.role === "assistant") emit(fitAssistant(assistantFromMessage(e.message)));
      // Reported when the corrective message really reached the conversation, not when it was queued.
      else if (e?.message?.role === "user" && !sawPrompt) sawPrompt = true;
      else if (e?.message?.role === "user" && textOfContent(e.message.content) === NUDGE_TEXT) emit({ type: "nudge" });
    });
    pi.on("tool_execution_start", (e) =>
      emit({
        type: "tool_start",
        id: String(e.toolCallId),
        name: String(e.toolName),
        args: cap(json(e.args ?? {}), ARGS_CAP),
      }),
    );
    pi.on("tool_execution_end", (e) =>
      emit({
        type: "tool_end",
        id: String(e.toolCallId),
        name: String(e.toolName),
        isError: !!e.isError,
        result: cap(textOfContent(e.result?.content), RESULT_CAP),
      }),
    );
    pi.on("agent_end", () => emit({ type: "agent_end" }));
    pi.on("agent_settled", () => emit({ type: "settled" }));
    pi.on("session_shutdown", () => out.flushDelta());
    const limits = watchRateLimits(pi, emit);
    // Siblings of the call (message.ts): only when it has more than one task, and only with a control pipe.
    const messenger = createMessenger(emit);
    const channel = listenForControl(pi, emit, limits.hold, asker.onAnswer, messenger.onReply);
    asker.setChannel(channel);
    if (channel.open && process.env.PI_SUBAGENT_TEAM === "1") installMessageTool(pi, messenger);
  }

  const mode = process.env.PI_SUBAGENT_FINALIZE ?? "required";
  let finalized = false;
  // An acceptance gate (child/gate.ts) checks every "done": a finalize call, or a plain answer when allowed.
  const gate = gateFromEnv(emit);
  if (gate && mode !== "required") gatePlainEndings(pi, gate, () => finalized);
  if (mode === "off") return;
  let nudges = 0;
  if (mode === "required") {
    // A turn that ends in plain text would end the run: queue the corrective message as a follow-up, which pi
    // delivers before the loop stops. Far cheaper than a new process that reloads the whole session.
    pi.on("turn_end", (e) => {
      const m = e?.message;
      if (finalized || nudges >= MAX_NUDGES || m?.role !== "assistant" || m.stopReason !== "stop") return;
      if (Array.isArray(m.content) && m.content.some((p: { type?: string }) => p?.type === "toolCall")) return;
      nudges++;
      pi.sendUserMessage(NUDGE_TEXT, { deliverAs: "followUp" });
    });
  }

  pi.registerTool({
    name: "subagent_finalize",
    label: "Finalize",
    // Every request of the child carries this definition: the fewest words that still say how to call it.
    description:
      "Return your result to the agent that delegated this task, as your last call. SUCCESS needs `result` (your full answer); ERROR needs `error`.",
    parameters: finalizeParameters({
      type: "object",
      properties: {
        status: { type: "string", enum: ["SUCCESS", "ERROR"] },
        result: { type: "string" },
        error: { type: "string" },
      },
      required: ["status"],
      additionalProperties: false,
    }),
    async execute(_id: string, raw: Partial<FinalizePayload>) {
      // With an outputSchema, a SUCCESS must carry `data` (pi has already checked it against the schema).
      const params = withData(raw);
      const problem = finalizeProblem(params);
      // Throwing marks the tool result as an error: the model sees why and can call again in the same turn loop.
      if (problem) throw new Error(`Invalid subagent_finalize call: ${problem}.`);
      const correction = gate && params.status === "SUCCESS" ? await gate.check(true) : null;
      if (correction) throw new Error(correction);
      const payload: FinalizePayload = {
        status: params.status!,
        result: params.result,
        error: params.error,
        ...(params.data !== undefined ? { data: params.data } : {}),
      };
      finalized = true;
      emit(fitFinalize(payload));
      return { content: [{ type: "text", text: "Final result recorded." }], details: payload, terminate: true };
    },
  });
}
