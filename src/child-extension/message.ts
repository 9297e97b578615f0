// `send_message {to, message}`: a child's note to a sibling of its call (docs/messaging.md). Registered only when
// the call has more than one task (PI_SUBAGENT_TEAM=1): a lone child has no one to write to, and every request
// carries the definition. The message goes to the owner on fd 3; the owner's hub (core/team.ts) routes it and
// answers on the control pipe with what became of it, which is the tool's result.
import { MESSAGE_TOOL } from "../core/team.ts";
import type { ChildEvent } from "../core/types.ts";
import type { MessageReply } from "./control.ts";

type Api = { registerTool(def: Record<string, unknown>): void };

/** The owner answers at once (it only routes): a reply this late means the owner is gone. */
const REPLY_WAIT_MS = 30_000;

export function createMessenger(emit: (ev: ChildEvent) => void) {
  const waiting = new Map<string, (r: MessageReply) => void>();
  let seq = 0;
  return {
    send(to: string, text: string): Promise<MessageReply> {
      const id = `s${++seq}`;
      return new Promise<MessageReply>((resolve) => {
        // Also holds the process open while the reply comes (under Node the control pipe is unref'd).
        const timer = setTimeout(() => {
          waiting.delete(id);
          resolve({ type: "message_reply", id, ok: false, text: "Not sent: the owner of this call did not answer." });
        }, REPLY_WAIT_MS);
        waiting.set(id, (r) => {
          clearTimeout(timer);
          resolve(r);
        });
        emit({ type: "message_send", id, to, text });
      });
    },
    onReply(r: MessageReply) {
      const resolve = waiting.get(r.id);
      waiting.delete(r.id);
      resolve?.(r);
    },
  };
}
export type Messenger = ReturnType<typeof createMessenger>;

export function installMessageTool(pi: Api, messenger: Messenger): void {
  pi.registerTool({
    name: MESSAGE_TOOL,
    label: "Message sibling",
    // Every request of the child carries this: short, and says when it is worth a message.
    description: `Send a sibling sub-agent of this call a short note (\`to\`: its name, or "*" for all): a finding or change it needs now. Not for progress reports or your result. Reaches it at its next turn.`,
    parameters: {
      type: "object",
      properties: { to: { type: "string" }, message: { type: "string" } },
      required: ["to", "message"],
      additionalProperties: false,
    },
    async execute(_id: string, params: { to?: unknown; message?: unknown }) {
      const to = typeof params?.to === "string" ? params.to : "";
      const text = typeof params?.message === "string" ? params.message : "";
      const r = await messenger.send(to, text);
      // Throwing marks the result as an error: the model sees why it was not sent.
      if (!r.ok) throw new Error(r.text);
      return { content: [{ type: "text", text: r.text }], details: { to } };
    },
  });
}
