// What a task's stages hand on to each other (task.ts runs them in order). The task itself is the resolved one
// (core/call/resolve.ts); prepare adds its records and what is looked up by name, each later stage its own part
// (isolate: the folder; run: the result).
import type { Profile } from "../profiles/profile.ts";
import type { Store } from "../store/store.ts";
import type { RunResult } from "../types.ts";
import type { IsolationResult, LiveIsolation, Worktree } from "./launch/isolation.ts";
import type { Engine } from "./engine.ts";
import type { ResolvedTask, TaskOutcome, TaskWiring } from "./task-types.ts";
import type { Where } from "./runners/where.ts";

export type TaskContext = {
  engine: Engine;
  /** What the task is, as the call resolved it: the stages read it and decide none of it again. */
  input: ResolvedTask;
  wiring: TaskWiring;
  // prepare
  id: string;
  agent: string;
  profile: Profile | null;
  resumeOf: ReturnType<Store["getSession"]>;
  sessionFile: string;
  /** What the child is given on stdin: the task's prompt with its files (or a resume transcript). */
  prompt: string;
  /** The run record, made before the child starts: every later end is recorded on it. */
  runId: number;
  model: { model?: string | null; warning?: string };
  /** What the run does differently from its agent file (the run header and record show them). */
  warnings: string[];
  trust: "yes" | "no" | undefined;
  /** Where the child process runs (local, docker, slurm; sandboxed or not) and the transport that reaches it. */
  where: Where;
  transport: Engine["settings"]["transport"];
  // skills
  skills: { skillPaths: string[]; appendPrompt: string };
  // memory
  /** The agent's memory section for the system prompt (task-memory.ts), when it has one. */
  memory?: string;
  // place
  iso: LiveIsolation | null;
  /** A confined task's layer over its own folder (not isolated): the child writes it, the owner writes back what
   *  comes back when the task ends (launch/harvest-rules.ts). */
  inPlace?: { worktree: Worktree; finish(): Promise<IsolationResult> } | null;
  /** Where the child runs: the task's cwd, or its worktree. */
  cwd: string;
  /** The values of the secrets its `.worktreeinclude` brought in: masked in its own transcript too (task-child.ts). */
  secrets?: string[];
  // run
  result: RunResult | null;
};

/** One step of a task's life after prepare. Returning a result ends the task there: recorded as is, nothing after
 * it runs. A new concern (a gate, a sandbox, a hand-off) is a new stage in task.ts's list, not a branch in another. */
export type TaskStage = (task: TaskContext) => RunResult | void | Promise<RunResult | void>;

export const taskOutcome = (task: Pick<TaskContext, "id" | "input" | "agent">, result: RunResult): TaskOutcome => ({
  sessionId: task.id,
  name: task.input.name,
  agent: task.agent,
  result,
});

/** The run stage's result, for the stages after it (a stage list out of order is a bug, not a task failure). */
export function ranResult(task: TaskContext): RunResult {
  if (!task.result) throw new Error("task stage order: no run result yet");
  return task.result;
}
