// The checks a call passes before anything starts that need no one (the same request gives the same answer
// wherever it came from): a session to resume that cannot be, an agent's conflicting skill settings, a gate whose
// folder is missing, a forked context with nothing to copy, a working folder that does not exist or cannot be read,
// duplicate tasks, a session database that cannot take the call's records.
import { duplicateTasks } from "../session-caps.ts";
import { validateProfileSkills } from "../profiles/profile.ts";
import { resumeNotFound, resumeRunning } from "../store/transcript.ts";
import { busyRun, type SessionRecord } from "../store/store-types.ts";
import { StoreError } from "../store/store-error.ts";
import { forkEntries, type ForkEntry } from "../run/fork.ts";
import type { Engine } from "../run/engine.ts";
import type { ResolvedTask } from "../run/task-types.ts";
import type { Refusal } from "./request.ts";
import { agentFile } from "../run/agent-file.ts";

type ForkFront = { forkBranch?: () => ForkEntry[] | undefined; forkNeeds?: string };

const invalid = (message: string): Refusal => ({ code: "INVALID_INPUT", message });

/** The checks that need no one: the same request gives the same answer wherever it came from. A gate's missing
 * folder is named before the missing folder itself: the gate is what would have failed at the end. What passes
 * gets the conversation each task starts from (none unless it asks for a forked context). `priors`: by task, the
 * session it resumes, as the store had it when the call was resolved. */
export function checkCall(
  engine: Engine,
  tasks: readonly ResolvedTask[],
  priors: readonly (SessionRecord | null)[],
  front: ForkFront,
): { refusal: Refusal } | { forks: (ForkEntry[] | undefined)[] } {
  for (const [i, t] of tasks.entries()) {
    const problem = t.resume ? checkResumable(engine, t.resume, priors[i]) : null;
    if (problem) return { refusal: invalid(problem) };
  }
  const problem = checkProfileSkills(engine, tasks) ?? gateFolderProblem(engine, tasks);
  if (problem) return { refusal: invalid(problem) };
  const forks = forkEntries(tasks, front.forkBranch ?? (() => undefined), front.forkNeeds);
  if (typeof forks === "string") return { refusal: invalid(forks) };
  for (const t of tasks) {
    const folder = folderProblem(engine, t.cwd);
    if (folder) return { refusal: invalid(`task "${t.name}": working directory ${folder}.`) };
  }
  const duplicate = duplicateTasks(tasks);
  if (duplicate) return { refusal: invalid(duplicate) };
  const store = storeProblem(engine);
  return store ? { refusal: store } : { forks };
}

const folderProblem = (engine: Engine, cwd: string) =>
  engine.host.folderProblem
    ? engine.host.folderProblem(cwd)
    : engine.host.stat(cwd)?.isDirectory
      ? null
      : `${cwd} does not exist`;

/** A call whose records could not be written (a read-only or another user's database, a full disk) starts nothing:
 *  every task a front says it started has its record. */
function storeProblem(engine: Engine): Refusal | null {
  try {
    engine.store.checkWritable?.();
    return null;
  } catch (err) {
    if (err instanceof StoreError) return { code: err.code, message: err.message };
    throw err;
  }
}

/** Why a session cannot be resumed now (docs/pi-extension.md "Task fields"), or null. */
function checkResumable(engine: Engine, id: string, prior: SessionRecord | null): string | null {
  if (!prior || prior.runs.length === 0) return resumeNotFound(id);
  // Running, or queued in a call still under way: its owner will run it.
  // The store's own judgement of owners: the one its startRun will refuse the session by.
  return busyRun(prior.runs.at(-1), (o) => engine.store.ownerAlive(o)) ? resumeRunning(id) : null;
}

/**
 * An agent with conflicting skill settings (docs/agents.md) fails the whole call before anything starts.
 * Returns the first problem among the tasks' agents, or null.
 */
function checkProfileSkills(engine: Engine, tasks: readonly ResolvedTask[]): string | null {
  for (const agent of new Set(tasks.map((t) => t.agent))) {
    const p = agentFile(engine, agent);
    const problem = p ? validateProfileSkills(p) : null;
    if (problem) return problem;
  }
  return null;
}

/** A gate runs in its task's folder, so that folder must exist: else the task would run to the end only to fail
 * its check. */
function gateFolderProblem(engine: Pick<Engine, "host">, tasks: readonly ResolvedTask[]): string | null {
  for (const t of tasks) {
    if (!t.gate) continue;
    if (!engine.host.stat(t.cwd)?.isDirectory)
      return `task "${t.name}": its gate \`${t.gate.command}\` would run in ${t.cwd}, which is not a directory`;
  }
  return null;
}
