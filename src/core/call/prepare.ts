// Every check a call passes before anything starts, in one order for every front. The checks that only read come
// first (a call that would be refused anyway asks nobody); then the ones that ask the user or count: consent for
// project-local agents, the session caps, the fan-out confirmation, and last the caps' admission, which counts
// the tasks as coming. What a front can give (a conversation to fork, a user to ask) it passes as CallFront.
import type { CapRefusal } from "../session-caps.ts";
import type { ForkEntry } from "../run/fork.ts";
import type { Engine } from "../run/engine.ts";
import { checkCall } from "./checks.ts";
import { toTaskInputs, type CallRequest, type CallTaskInput, type Refusal } from "./request.ts";

type Call = { tasks: number; maxCost?: number };

export type CallFront = {
  /** The conversation a `context: "fork"` task starts from (pi's current branch, the CLI's --fork session). */
  forkBranch?: () => ForkEntry[] | undefined;
  /** What to say when a task asks for a fork and there is nothing to copy. */
  forkNeeds?: string;
  /** Project-local agents that may not run here, by the name the call used, with why: those tasks fail alone. */
  refusedProfiles?: (names: (string | undefined)[]) => Promise<Map<string, string>>;
  /** The session caps (core/run/cap-guard.ts): check reads, admit counts the call's tasks as coming. */
  caps: {
    check(call: Call): CapRefusal | null | Promise<CapRefusal | null>;
    admit(call: Call): CapRefusal | null | Promise<CapRefusal | null>;
  };
  /** subagents.confirmAbove: whether the user allows this many children at once. */
  confirmFanout?: (tasks: number) => Promise<Refusal | null>;
};

export type Prepared = { inputs: CallTaskInput[] } | { refusal: Refusal };

/** The call's TaskInputs, ready to run (and admitted under the caps), or why it does not start. */
export async function prepareCall(engine: Engine, request: CallRequest, front: CallFront): Promise<Prepared> {
  const inputs = toTaskInputs(request, () => engine.store.newSessionId());
  const refusal = checkCall(engine, request, inputs, front);
  if (refusal) return { refusal };
  if (front.refusedProfiles) {
    const refused = await front.refusedProfiles(inputs.map((t) => t.profile));
    for (const t of inputs) if (t.profile && refused.has(t.profile)) t.refused = refused.get(t.profile);
  }
  const call = { tasks: inputs.length, maxCost: request.maxCost };
  const limit =
    (await front.caps.check(call)) ?? (await front.confirmFanout?.(inputs.length)) ?? (await front.caps.admit(call));
  return limit ? { refusal: limit } : { inputs };
}
