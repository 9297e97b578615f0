// The child's end of the control pipe (fd 4, PI_SUBAGENT_CONTROL_FD): the owner writes one JSON line per
// command; a steer becomes pi's own steering message, which pi delivers at the next turn boundary (after the
// tool calls in progress, before the next model call). When pi puts it into the conversation we report it on
// fd 3 as `steered`: the owner's only proof of delivery (a child that ends first never reports it).
import * as net from "node:net";
import * as fs from "node:fs";
import { textOfContent } from "../core/run/process/transport.ts";
import type { ChildEvent } from "../core/types.ts";
import { framedMessage } from "../core/team.ts";

type Api = {
  on(event: string, handler: (event: any, ctx: any) => unknown): void;
  sendUserMessage(text: string, options?: { deliverAs?: "steer" | "followUp" }): void;
};

export type ControlLine =
  | { type: "steer"; id: string; text: string }
  /** A sibling's message (core/team.ts): delivered like a steer, framed with its sender. */
  | { type: "message"; id: string; from: string; to: string; text: string }
  /** The owner's answer to this child's send_message (message.ts). */
  | { type: "message_reply"; id: string; ok: boolean; text: string }
  | { type: "hold"; until: number }
  /** The owner's answer to a question (ask.ts): a value, or a note saying why there is none. */
  | { type: "answer"; id: string; value?: string | boolean; note?: string };
export type Answer = Extract<ControlLine, { type: "answer" }>;
export type MessageReply = Extract<ControlLine, { type: "message_reply" }>;

/** What the child's question side needs from the control pipe: whether there is one, and to be read while a
 *  question waits (outside a running agent, e.g. a dialog in session_start, nothing else reads it). */
export type ControlChannel = { open: boolean; readWhile(p: Promise<unknown>): void };

/** Reads lines from fd until the returned stop() is called. Under Bun a pending read keeps the process alive
 *  (its file stream cannot be unref'd), so the caller reads only while the agent runs: a pi that ends on its
 *  own — including one that exits early on an error such as a missing API key — is never held open by us. Lines
 *  written meanwhile wait in the pipe; a partial line is kept across stops. */
function lineReader(fd: number, onLine: (line: string) => void): () => () => void {
  let buf = "";
  const push = (chunk: string) => {
    buf += chunk;
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.trim()) onLine(line);
    }
  };
  if (typeof Bun !== "undefined") {
    // Bun's net.Socket does not read an inherited pipe fd; its file stream polls it properly.
    return () => {
      const reader = (Bun.file(fd).stream() as ReadableStream<Uint8Array>).getReader();
      const dec = new TextDecoder();
      void (async () => {
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return;
            push(dec.decode(value, { stream: true }));
          }
        } catch {
          // the owner closed its end, or we stopped: nothing more to read now
        }
      })();
      return () => void reader.cancel().catch(() => {});
    };
  }
  // Node: one socket per process, whatever loads this module how often (a kept child loads its extensions again
  // for each task's session). The instance reading now gets the data; what comes while none reads waits for the next.
  const shared = nodeControl(fd);
  return () => {
    shared.consumer = push;
    for (const chunk of shared.waiting.splice(0)) push(chunk);
    return () => {
      if (shared.consumer === push) shared.consumer = null;
    };
  };
}

type NodeControl = { consumer: ((chunk: string) => void) | null; waiting: string[] };
const NODE_CONTROL = Symbol.for("subagents.control-socket");

function nodeControl(fd: number): NodeControl {
  const g = globalThis as { [NODE_CONTROL]?: NodeControl };
  if (g[NODE_CONTROL]) return g[NODE_CONTROL];
  const shared: NodeControl = { consumer: null, waiting: [] };
  const sock = new net.Socket({ fd, readable: true, writable: false });
  sock.unref(); // never keeps pi alive
  sock.setEncoding("utf8");
  sock.on("data", (c: string) => (shared.consumer ? shared.consumer(c) : shared.waiting.push(c)));
  sock.on("error", () => {});
  g[NODE_CONTROL] = shared;
  return shared;
}

export function listenForControl(
  pi: Api,
  emit: (ev: ChildEvent) => void,
  onHold: (until: number) => void = () => {},
  onAnswer: (a: Answer) => void = () => {},
  onMessageReply: (r: MessageReply) => void = () => {},
): ControlChannel {
  const closed: ControlChannel = { open: false, readWhile: () => {} };
  const fd = Number(process.env.PI_SUBAGENT_CONTROL_FD);
  if (!Number.isInteger(fd) || fd < 3) return closed;
  try {
    fs.fstatSync(fd);
  } catch {
    return closed; // started without the pipe (an older owner): no control
  }
  // Before the agent starts, pi is not streaming and would start a turn of its own: hold steers until it runs.
  // After it ended, a steer would start a turn nobody collects: drop it (the owner reports it undelivered).
  let phase: "before" | "running" | "ended" = "before";
  // Siblings' messages (core/team.ts) wait in the inbox for the end of the turn, then go in as ONE steer: pi
  // delivers queued steers one per turn by default (settings steeringMode), so three messages sent apart would
  // take three turns, and a child that finalizes meanwhile would never see the later ones. Each is reported as
  // message_in when the combined message enters the conversation.
  type Message = { id: string; from: string; to: string; text: string };
  type Steer = { id: string; text: string; messages?: Message[] };
  const early: Steer[] = [];
  const pending: Steer[] = [];
  const inbox: Message[] = [];
  const deliver = (msg: Steer) => {
    pending.push(msg);
    pi.sendUserMessage(msg.text, { deliverAs: "steer" });
  };
  const deliverInbox = () => {
    if (!inbox.length) return;
    const messages = inbox.splice(0);
    deliver({
      id: messages.map((m) => m.id).join(","),
      text: messages.map((m) => framedMessage(m.from, m.text)).join("\n\n"),
      messages,
    });
  };
  // pi asks for queued steers right after turn_end's handlers ran: what is in the inbox then reaches the next
  // request. A turn that finalized ends the task: its messages stay undelivered (the owner records them).
  pi.on("turn_end", (e) => {
    const finalized =
      Array.isArray(e?.toolResults) &&
      e.toolResults.some(
        (r: { toolName?: string; isError?: boolean }) => r?.toolName === "subagent_finalize" && !r.isError,
      );
    if (phase === "running" && !finalized) deliverInbox();
  });
  let stopReading: (() => void) | null = null;
  // A kept child (core/run/process/pool.ts) runs one task after another on the same pipe: the owner names the
  // session each line is for, so a late steer or answer for the task before never reaches this one.
  let session: string | undefined;
  pi.on("session_start", (_e, ctx) => {
    session = ctx?.sessionManager?.getSessionFile?.() ?? undefined;
  });
  pi.on("agent_start", () => {
    phase = "running";
    stopReading ??= startReading();
    for (const msg of early.splice(0)) deliver(msg);
    // Held while the task was queued or starting: they reach its first request.
    deliverInbox();
  });
  pi.on("agent_end", () => {
    phase = "ended";
    if (waits) return; // a question still waits for its answer: readWhile stops reading after it
    stopReading?.();
    stopReading = null;
  });
  // A kept child's next task loads this extension again: this instance reads no more.
  pi.on("session_shutdown", () => {
    stopReading?.();
    stopReading = null;
  });
  pi.on("message_start", (e) => {
    if (e?.message?.role !== "user" || !pending.length) return;
    const text = textOfContent(e.message.content);
    const i = pending.findIndex((p) => p.text === text);
    if (i < 0) return;
    const [hit] = pending.splice(i, 1);
    if (hit.messages) for (const m of hit.messages) emit({ type: "message_in", ...m });
    else emit({ type: "steered", id: hit.id, text: hit.text });
  });
  const startReading = lineReader(fd, (line) => {
    let msg: ControlLine & { session?: string };
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof msg?.session === "string" && msg.session !== session) return;
    // A call-wide rate-limit hold: the next model request waits for it (rate-limit.ts).
    if (msg?.type === "hold" && typeof msg.until === "number") return onHold(msg.until);
    if (msg?.type === "answer" && typeof msg.id === "string") return onAnswer(msg);
    if (msg?.type === "message_reply" && typeof msg.id === "string") return onMessageReply(msg);
    if (msg?.type === "message" && typeof msg.text === "string" && typeof msg.from === "string") {
      // After the agent ended nobody collects it: dropped (the owner reports it undelivered).
      if (phase !== "ended")
        inbox.push({ id: String(msg.id), from: msg.from, to: String(msg.to ?? ""), text: msg.text });
      return;
    }
    if (msg?.type !== "steer" || typeof msg.text !== "string") return;
    if (phase === "running") deliver(msg);
    else if (phase === "before") early.push(msg);
  });
  let waits = 0;
  return {
    open: true,
    readWhile(p) {
      waits++;
      stopReading ??= startReading();
      void p.finally(() => {
        if (--waits > 0 || phase === "running") return;
        stopReading?.();
        stopReading = null;
      });
    },
  };
}
