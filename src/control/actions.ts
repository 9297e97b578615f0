// Steer and wait as the CLI and the pi extension both do them: from where a session stands (client.ts
// sessionState) to a delivered message or an ended run, with the reason when not.
import { shownId } from "../core/store/transcript.ts";
import { sessionState, request, type SessionRecords, type SessionState } from "./client.ts";

/** answered: the child was waiting on a question, and the message became its answer (ask.ts). */
export type SteerResult = { ok: true; answered?: boolean } | { ok: false; reason: string };

/** Sends `text` to the session's running child through its owner; resolves once the child has it (or why not).
 *  `answer` sends it only as the answer to an open question (`subagents answer`), never as a steer. */
export async function steerSession(
  state: SessionState,
  id: string,
  text: string,
  status: () => string,
  op: "steer" | "answer" = "steer",
): Promise<SteerResult> {
  if (state.kind === "unknown") return { ok: false, reason: `no session "${shownId(id)}"` };
  if (state.kind === "done") return { ok: false, reason: `session ${id} is not running (${status()})` };
  if (!state.owner?.socket)
    return { ok: false, reason: `session ${id} is starting or its owner cannot be reached; try again in a moment` };
  const reply = await request(state.owner.socket, { op, sessionId: id, text });
  return reply.ok ? { ok: true, ...(reply.answered ? { answered: true } : {}) } : { ok: false, reason: reply.reason };
}

/** Polls until the session is no longer active; false when `signal` aborted first. */
export async function waitUntilEnded(state: () => SessionState, signal?: AbortSignal, pollMs = 200): Promise<boolean> {
  while (state().kind === "active") {
    if (signal?.aborted) return false;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, pollMs);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      }
      signal?.addEventListener("abort", done, { once: true });
    });
  }
  return !signal?.aborted;
}

/** Stops the session's run through its owner (the kill protocol; recorded as cancelled, as "Stopped from <by>"
 *  when `by` names who stopped it). */
export async function cancelSession(
  state: SessionState,
  id: string,
  status: () => string,
  by?: string,
): Promise<SteerResult> {
  if (state.kind === "unknown") return { ok: false, reason: `no session "${shownId(id)}"` };
  if (state.kind === "done") return { ok: false, reason: `session ${id} is not running (${status()})` };
  if (!state.owner?.socket)
    return { ok: false, reason: `session ${id}: its owner cannot be reached yet; try again in a moment` };
  const reply = await request(state.owner.socket, { op: "cancel", sessionId: id, ...(by ? { by } : {}) }, 5000);
  return reply.ok ? { ok: true } : { ok: false, reason: reply.reason };
}

/** The retrieval tools' `steer` and `wait` (get_subagent_output in every front): lines saying what happened to the
 *  steer and whether the wait was cut short. `awaiting` marks the session as waited for while it waits (pi's notice
 *  would only repeat the result); its release is told whether the wait saw the session end. */
export async function steerAndWaitNotes(
  records: SessionRecords,
  id: string,
  o: { steer?: string; wait?: boolean },
  signal?: AbortSignal,
  awaiting?: () => (ended: boolean) => void,
): Promise<string[]> {
  const state = () => sessionState(records, id);
  const status = () => records.store.getSession(id)?.status ?? "finished";
  const notes: string[] = [];
  // Waited for from before the steer: a steered child may end before the steer's delivery is confirmed, and an end
  // that nobody was waiting for yet would be announced besides this call's own result.
  const release = o.wait ? awaiting?.() : undefined;
  let ended = false;
  try {
    if (o.steer !== undefined) {
      const r = o.steer.trim()
        ? await steerSession(state(), id, o.steer, status)
        : { ok: false as const, reason: "the message is empty" };
      notes.push(
        r.ok
          ? r.answered
            ? `Answered the question ${id} was waiting on.`
            : `Steer delivered to ${id}.`
          : `Steer not delivered: ${r.reason}.`,
      );
    }
    if (o.wait) {
      ended = await waitUntilEnded(state, signal);
      if (!ended) notes.push("Stopped waiting: the call was aborted; the sub-agent keeps running.");
    }
  } finally {
    release?.(ended);
  }
  return notes;
}
