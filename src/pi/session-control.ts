// get_subagent_output's `steer` and `wait`: the same owner-based control the CLI uses (control/actions.ts), for
// sessions of this pi session, of other pi sessions and of the CLI alike.
import * as path from "node:path";
import { steerAndWaitNotes } from "../control/actions.ts";
import { sessionState, type SessionState } from "../control/client.ts";
import type { PiSession } from "./session-state.ts";
import type { PiServices } from "./services.ts";

/** Where the owner registry lives: next to the session database (as services.ts opens it). */
export const dataDir = (rt: PiServices) =>
  path.dirname(rt.host.env.SUBAGENTS_DB || path.join(rt.agentDir, "subagents.db"));

export function stateOf(rt: PiServices, id: string): SessionState {
  return sessionState({ store: rt.store, dataDir: dataDir(rt) }, id);
}

/** Lines for the tool result: what happened to the steer, and whether the wait was cut short. */
export function steerAndWait(
  rt: PiServices,
  session: PiSession,
  id: string,
  o: { steer?: string; wait?: boolean },
  signal?: AbortSignal,
): Promise<string[]> {
  return steerAndWaitNotes(
    { store: rt.store, dataDir: dataDir(rt) },
    id,
    o,
    signal,
    // While the model waits here, the end's notice would only repeat this result.
    () => session.awaiting(id),
  );
}
