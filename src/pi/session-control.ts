// get_subagent_output's `steer` and `wait`: the same owner-based control the CLI uses (control/actions.ts), for
// sessions of this pi session, of other pi sessions and of the CLI alike.
import * as path from "node:path";
import { steerSession, waitUntilEnded } from "../control/actions.ts";
import { sessionState, type SessionState } from "../control/client.ts";
import { liveOwners, ownerAlive } from "../control/registry.ts";
import type { PiSession } from "./session-state.ts";
import type { PiServices } from "./services.ts";

/** Where the owner registry lives: next to the session database (as services.ts opens it). */
export const dataDir = (rt: PiServices) =>
  path.dirname(rt.host.env.SUBAGENTS_DB || path.join(rt.agentDir, "subagents.db"));

export function stateOf(rt: PiServices, id: string): SessionState {
  const data = dataDir(rt);
  return sessionState(rt.store, liveOwners(data), id, (o) => ownerAlive(data, o));
}

/** Lines for the tool result: what happened to the steer, and whether the wait was cut short. */
export async function steerAndWait(
  rt: PiServices,
  session: PiSession,
  id: string,
  o: { steer?: string; wait?: boolean },
  signal?: AbortSignal,
): Promise<string[]> {
  const notes: string[] = [];
  if (o.steer !== undefined) {
    const r = o.steer.trim()
      ? await steerSession(stateOf(rt, id), id, o.steer, () => rt.store.getSession(id)?.status ?? "finished")
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
    // While the model waits here, the end's notice would only repeat this result.
    const release = session.awaiting(id);
    let ended = false;
    try {
      ended = await waitUntilEnded(() => stateOf(rt, id), signal);
      if (!ended) notes.push("Stopped waiting: the call was aborted; the sub-agent keeps running.");
    } finally {
      release(ended);
    }
  }
  return notes;
}
