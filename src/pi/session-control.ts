// get_subagent_output's `steer` and `wait`: the same owner-based control the CLI uses (control/actions.ts), for
// sessions of this pi session, of other pi sessions and of the CLI alike.
import { steerAndWaitNotes } from "../control/actions.ts";
import type { PiSession } from "./session-state.ts";
import type { PiServices } from "./services.ts";

/** Lines for the tool result: what happened to the steer, and whether the wait was cut short. */
export function steerAndWait(
  rt: PiServices,
  session: PiSession,
  id: string,
  o: { steer?: string; wait?: boolean },
  signal?: AbortSignal,
): Promise<string[]> {
  // While the model waits here, the end's notice would only repeat this result.
  return steerAndWaitNotes(rt, id, o, signal, () => session.awaiting(id));
}
