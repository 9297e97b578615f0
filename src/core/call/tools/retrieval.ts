// get_subagent_output, get_subagent_session and list_subagent_profiles (docs/pi-extension.md) from their parameters
// to what their text is made of, for every front that serves them (pi, MCP): the parameters checked, the session's
// record (a session of any owner: this front's, a pi session's, the CLI's), a steer and a wait through its owner.
// The text itself is ui/retrieval.ts's, the same in every front.
import type { Diagnostic } from "../../profiles/profile-discovery.ts";
import type { Profile } from "../../profiles/profile.ts";
import type { Engine } from "../../run/engine.ts";
import type { SessionRecord, SessionStore } from "../../store/store-types.ts";
import { sessionNotFound } from "../../store/transcript.ts";
import { firstProblem, SCHEMAS } from "../schemas.ts";
import { workflowLines } from "../workflow.ts";
import type { ToolRefusal } from "./front.ts";
import { refusal } from "./start.ts";

export type RetrievalFront = {
  store: SessionStore;
  /** Steers the session and waits for its run's end through its owner, as `subagents steer` and `wait` do. */
  steerAndWait(sessionId: string, o: { steer?: string; wait?: boolean }, signal?: AbortSignal): Promise<string[]>;
};

type Refused = { refusal: ToolRefusal };

function checked(schema: (typeof SCHEMAS)[keyof typeof SCHEMAS], params: unknown): Refused | null {
  const problem = firstProblem(schema, params);
  return problem ? refusal("params", { code: "INVALID_INPUT", message: `Invalid parameters: ${problem}` }) : null;
}

/** The session's record with at least one run, or the spec's not-found error. */
function recorded(store: SessionStore, sessionId: string): { record: SessionRecord } | Refused {
  const record = store.getSession(sessionId);
  if (!record || record.runs.length === 0)
    return refusal("call", { code: "INVALID_INPUT", message: sessionNotFound(sessionId) });
  return { record };
}

/** get_subagent_output: a steer and a wait when asked for, then the session's record. */
export async function outputFlow(
  raw: unknown,
  front: RetrievalFront,
  signal?: AbortSignal,
): Promise<Refused | { record: SessionRecord; notes: string[] }> {
  const bad = checked(SCHEMAS.output, raw);
  if (bad) return bad;
  const p = raw as { sessionId: string; steer?: string; wait?: boolean };
  const notes = await front.steerAndWait(p.sessionId, p, signal);
  const found = recorded(front.store, p.sessionId);
  return "refusal" in found ? found : { ...found, notes };
}

/** get_subagent_session: the session's record (its transcript is read from the store by ui/retrieval.ts). */
export function sessionFlow(raw: unknown, store: SessionStore): Refused | { record: SessionRecord } {
  return checked(SCHEMAS.sessionId, raw) ?? recorded(store, (raw as { sessionId: string }).sessionId);
}

/** list_subagent_profiles: the agents and saved workflows of the folder a call would run in. */
export function profilesFlow(
  front: Pick<Engine, "host" | "agentDir"> & {
    profilesFor(cwd: string): { profiles: Map<string, Profile>; diagnostics: Diagnostic[] };
  },
  cwd: string,
) {
  const { profiles, diagnostics } = front.profilesFor(cwd);
  return { profiles, diagnostics, workflows: workflowLines(front, cwd) };
}
