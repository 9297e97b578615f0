// A call's preparation, in one order for every front. The checks that only read come first (a call that would be
// refused anyway asks nobody: checks.ts); then what each task is gets decided, once (its agent, its timeout, its
// finalize contract, the conversation it forks); then the ones that ask the user or count: consent for
// project-local agents, the session caps, the fan-out confirmation. The caps admit the call when it runs
// (runner.ts). What a front can give (a conversation to fork, a user to ask) it passes as CallFront.
import type { CapGuard } from "../run/cap-guard.ts";
import type { Engine } from "../run/engine.ts";
import type { ForkEntry } from "../run/fork.ts";
import { resolveFinalizeMode, type FinalizeMode } from "../run/process/finalize-contract.ts";
import type { PreparedTask, TaskInput } from "../run/task-types.ts";
import { findProfile } from "../profiles/profile.ts";
import { checkCall } from "./checks.ts";
import { confinedFolderRefusal, outsideRoots, realFolder } from "./folders.ts";
import { confined, taskWhere } from "../run/runners/choose.ts";
import { toTaskInputs, type CallRequest, type Refusal } from "./request.ts";

export type CallFront = {
  /** The conversation a `context: "fork"` task starts from (pi's current branch, the CLI's --fork session). */
  forkBranch?: () => ForkEntry[] | undefined;
  /** What to say when a task asks for a fork and there is nothing to copy. */
  forkNeeds?: string;
  /** Project-local agents that may not run here, by the name the call used, with why: those tasks fail alone. */
  refusedProfiles?: (names: (string | undefined)[]) => Promise<Map<string, string>>;
  /** The session caps (core/run/cap-guard.ts) the call will run under: checked here, admitted by the runner. */
  caps: CapGuard;
  /** subagents.confirmAbove: whether the user allows this many children at once. */
  confirmFanout?: (tasks: number) => Promise<Refusal | null>;
};

/** A call ready to run (runner.ts): its tasks as decided, and beside them what the checks found about each. */
export type PreparedCall = {
  readonly tasks: readonly PreparedTask[];
  /** By task: why its project-local agent may not run here (that task fails alone, recorded), else undefined. */
  readonly refused: readonly (string | undefined)[];
  /** The call's shared dollar limit (maxCost, `--max-total-cost`). */
  readonly maxCost?: number;
  /** Tasks at once; unset: subagents.concurrency. */
  readonly concurrency?: number;
};

/** The call, prepared, or why it does not start. */
export async function prepareCall(
  engine: Engine,
  request: CallRequest,
  front: CallFront,
): Promise<{ call: PreparedCall } | { refusal: Refusal }> {
  const asked = toTaskInputs(request, () => engine.store.newSessionId());
  // Every folder by its real path from here on: what is checked is what the child will be given (folders.ts).
  const inputs = asked.map((t) => ({ ...t, cwd: realFolder(engine, t.cwd) }));
  const named = (t: TaskInput, i: number) => ({ ...t, asked: asked[i].cwd });
  const outside = outsideRoots(engine, inputs.map(named), request.roots);
  if (outside) return { refusal: outside };
  const checked = checkCall(engine, request, inputs, front);
  if ("refusal" in checked) return checked;
  const tasks = inputs.map((t, i) => decideTask(engine, t, checked.forks[i], request.defaults.finalize));
  for (const [i, t] of tasks.entries()) {
    const refusal = confinedFolderRefusal(engine, named(t, i));
    if (refusal) return { refusal };
  }
  const consent = front.refusedProfiles ? await front.refusedProfiles(inputs.map((t) => t.profile)) : new Map();
  const refused = inputs.map((t) => (t.profile ? consent.get(t.profile) : undefined));
  const call = { tasks: tasks.length, maxCost: request.maxCost };
  const limit = front.caps.check(engine.settings, call) ?? (await front.confirmFanout?.(tasks.length)) ?? null;
  if (limit) return { refusal: limit };
  return {
    call: {
      tasks,
      refused,
      ...(request.maxCost !== undefined ? { maxCost: request.maxCost } : {}),
      ...(request.concurrency !== undefined ? { concurrency: request.concurrency } : {}),
    },
  };
}

/**
 * What a task is, decided once: the agent (its canonical name; a resumed session's own when the task names none),
 * the timeout that applies (its own, else its agent's, else the settings'), the finalize contract (required for a
 * structured result, else the agent's or the settings' explicit choice, else the front's) and its forked start.
 */
function decideTask(
  engine: Engine,
  t: TaskInput,
  fork: ForkEntry[] | undefined,
  frontFinalize: FinalizeMode = "optional",
): PreparedTask {
  const prior = t.resume ? engine.store.getSession(t.resume) : null;
  const named = t.profile ?? (prior && prior.agent !== "default" ? prior.agent : undefined);
  const profile = named ? findProfile(engine.profiles, named) : undefined;
  const outputSchema = t.outputSchema ?? profile?.outputSchema;
  const where = taskWhere(engine.settings, t, profile ?? null, prior?.runs);
  return {
    ...t,
    ...(confined(where) ? { confined: true } : {}),
    ...(named ? { profile: profile?.name ?? named } : {}),
    timeoutSec: t.timeoutSec ?? profile?.timeout ?? engine.settings.timeout,
    finalize: outputSchema
      ? "required"
      : resolveFinalizeMode(profile?.finalize, engine.settings.finalize, frontFinalize),
    ...(fork ? { fork } : {}),
  };
}
