// A call's preparation, in one order for every front. Each task is resolved first (resolve.ts: every value it runs
// with, decided once); then the checks that only read (a call that would be refused anyway asks nobody: checks.ts);
// then the ones that ask the user or count: consent for project-local agents, the session caps, the fan-out
// confirmation. The caps admit the call when it runs (runner.ts). What a front can give (a conversation to fork, a
// user to ask) it passes as CallFront.
import type { CapGuard } from "../run/cap-guard.ts";
import type { Engine } from "../run/engine.ts";
import type { ForkEntry } from "../run/fork.ts";
import { DEFAULT_AGENT, type ResolvedTask } from "../run/task-types.ts";
import { checkCall } from "./checks.ts";
import { confinedFolderRefusal, outsideRoots } from "./folders.ts";
import { confinedTask } from "../run/runners/where.ts";
import type { CallRequest, Refusal } from "./request.ts";
import { resolveTask } from "./resolve.ts";
import { agentRefusal } from "../run/agent-file.ts";

export type CallFront = {
  /** The conversation a `context: "fork"` task starts from (pi's current branch, the CLI's --fork session). */
  forkBranch?: () => ForkEntry[] | undefined;
  /** What to say when a task asks for a fork and there is nothing to copy. */
  forkNeeds?: string;
  /** Project-local agents that may not run here, by name, with why: those tasks fail alone. */
  refusedProfiles?: (names: (string | undefined)[]) => Promise<Map<string, string>>;
  /** The session caps (core/run/cap-guard.ts) the call will run under: checked here, admitted by the runner. */
  caps: CapGuard;
  /** subagents.confirmAbove: whether the user allows this many children at once. */
  confirmFanout?: (tasks: number) => Promise<Refusal | null>;
};

/** A call ready to run (runner.ts): its tasks as resolved, and beside them why any of them may not run. */
export type PreparedCall = {
  readonly tasks: readonly ResolvedTask[];
  /** By task: why it may not run here — its agent is not loaded, or a project-local agent without consent — (that
   *  task fails alone, recorded), else undefined. */
  readonly refused: readonly (Refusal | undefined)[];
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
  const { store } = engine;
  const priors = request.tasks.map((t) => (t.resume ? store.getSession(t.resume) : null));
  const resolved = request.tasks.map((t, i) =>
    resolveTask(engine, t, request.defaults, priors[i], () => store.newSessionId()),
  );
  // The folder as the call wrote it, for a refusal's words: each task's real path is what is checked (folders.ts).
  const named = (t: ResolvedTask, i: number) => ({ ...t, asked: request.tasks[i].cwd ?? request.defaults.cwd });
  const outside = outsideRoots(engine, resolved.map(named), request.roots);
  if (outside) return { refusal: outside };
  const checked = checkCall(engine, resolved, priors, front);
  if ("refusal" in checked) return checked;
  const tasks = resolved.map((t, i) => (checked.forks[i] ? { ...t, fork: checked.forks[i] } : t));
  for (const [i, t] of tasks.entries()) {
    const refusal = confinedFolderRefusal(engine, { ...named(t, i), confined: confinedTask(t) });
    if (refusal) return { refusal };
  }
  const unknown = tasks.map((t) => agentRefusal(engine, t.agent));
  const asked = tasks.filter((_, i) => !unknown[i] && tasks[i].agent !== DEFAULT_AGENT).map((t) => t.agent);
  const consent = front.refusedProfiles && asked.length ? await front.refusedProfiles(asked) : new Map();
  const refused = tasks.map((t, i): Refusal | undefined => {
    const why = consent.get(t.agent);
    return unknown[i] ?? (why ? { code: "SUBAGENTS_DISABLED", message: why } : undefined);
  });
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
