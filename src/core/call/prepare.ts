// Every check a call passes before anything starts, in one order for every front. The checks that only read come
// first (a call that would be refused anyway asks nobody); then the ones that ask the user or count: consent for
// project-local agents, the session caps, the fan-out confirmation, and last the caps' admission, which counts
// the tasks as coming. What a front can give (a conversation to fork, a user to ask) it passes as CallFront.
import { duplicateTasks, type CapRefusal } from "../session-caps.ts";
import { attachFork, type ForkEntry } from "../run/fork.ts";
import { gateFolderProblem } from "../run/gate-check.ts";
import { checkProfileSkills, checkResumable, type Engine, type TaskInput } from "../run/task-shared.ts";
import { StoreError } from "../store/store-error.ts";
import { contextOf, toTaskInputs, type CallRequest, type CallTaskInput, type Refusal } from "./request.ts";

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

const invalid = (message: string): Refusal => ({ code: "INVALID_INPUT", message });

/** The checks that need no one: the same request gives the same answer wherever it came from. A gate's missing
 * folder is named before the missing folder itself: the gate is what would have failed at the end. */
export function checkCall(
  engine: Engine,
  request: CallRequest,
  inputs: TaskInput[],
  front: Pick<CallFront, "forkBranch" | "forkNeeds">,
): Refusal | null {
  for (const t of inputs) {
    const problem = t.resume ? checkResumable(engine, t.resume) : null;
    if (problem) return invalid(problem);
  }
  const problem =
    checkProfileSkills(
      engine,
      inputs.map((t) => t.profile),
    ) ??
    gateFolderProblem(engine, inputs) ??
    attachFork(engine.profiles, contextOf(request), inputs, front.forkBranch ?? (() => undefined), front.forkNeeds);
  if (problem) return invalid(problem);
  for (const t of inputs) {
    const folder = folderProblem(engine, t.cwd);
    if (folder) return invalid(`task "${t.name}": working directory ${folder}.`);
  }
  const duplicate = duplicateTasks(inputs);
  return duplicate ? invalid(duplicate) : storeProblem(engine);
}

const folderProblem = (engine: Engine, cwd: string) =>
  engine.host.folderProblem
    ? engine.host.folderProblem(cwd)
    : engine.host.stat(cwd)?.isDirectory
      ? null
      : `${cwd} does not exist`;

/** A call whose records could not be written (a read-only or foreign-owned database, a full disk) starts nothing:
 *  every task the front says it started has its record. */
function storeProblem(engine: Engine): Refusal | null {
  try {
    engine.store.checkWritable?.();
    return null;
  } catch (err) {
    if (err instanceof StoreError) return { code: err.code, message: err.message };
    throw err;
  }
}

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
