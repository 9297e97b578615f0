// What a task is on its way through core/run: its input (as the call module prepared it), what the call wires into
// it while it runs (TaskWiring), and its outcome.
import type { TeamMember } from "../team.ts";
import type { FileSpec } from "../files.ts";
import type { FinalizeMode } from "./process/finalize-contract.ts";
import type { Profile } from "../profiles/profile.ts";
import type { RunState } from "./process/run-state.ts";
import type { ChildEvent, ErrorCode, RunResult } from "../types.ts";
import type { IsolationMode } from "./launch/isolation.ts";
import type { GateSpec } from "./process/gate.ts";
import type { RateGate } from "./process/rate-gate.ts";
import type { PoolTicket } from "./process/pool.ts";
import type { Budget, CallSpend } from "../budget.ts";
import type { RunnerName } from "./runners/types.ts";
import type { RuntimeName } from "../runtime-names.ts";
import type { Asker, AskRequest } from "./process/ask.ts";
import type { TaskEventPayload } from "./hooks/payload.ts";

/** One entry of a pi session file (its branch is what a forked child starts from: fork.ts). */
export type ForkEntry = { type: string; id: string; parentId: string | null; [k: string]: unknown };

/** The agent of a task that names none: pi's own defaults, no agent file. */
export const DEFAULT_AGENT = "default";

/**
 * A task as the call's preparation resolved it (core/call/resolve.ts), once for every front: every value it runs with,
 * decided from the task, its agent file, the session it resumes, the settings and the front, in the order that
 * file's table gives. Plain data (it is handed to a background supervisor as JSON); nothing changes it afterwards,
 * and the stages that run it decide nothing of it again.
 */
export type ResolvedTask = {
  name: string;
  prompt: string;
  cwd: string;
  /** The agent's canonical name (its file is looked up by it), or DEFAULT_AGENT. */
  agent: string;
  /** The model asked for (the front's, else the agent file's). */
  model?: string;
  /** That model as its author meant it (model-choice.ts: aliases, the parent's, the user's models) and what was
   *  substituted; `model: null` runs pi's default, no `model`: nothing was asked. */
  modelChoice: { model?: string | null; warning?: string };
  /** The project-trust decision the child is told for its folder (the parent pi's, or pi's own saved one for a
   *  confined pi child); unset: pi's own rules decide. */
  trust?: "yes" | "no";
  /** Seconds without a new tool call. */
  timeoutSec: number;
  resume?: string;
  files?: FileSpec[];
  /** The resumed session's id, the one the front chose (the `subagent` tool's sticky id), or a new one. */
  sessionId: string;
  /** Run in a git worktree of cwd's repository; the task's changes end on a branch of their own. */
  isolation?: IsolationMode;
  /** Names of tasks of the same call this one waits for (dag.ts); `{{name}}` in the prompt is their output. */
  after?: string[];
  /** Where the child runs (src/core/run/runners/), and whether in the sandbox. */
  runner: RunnerName;
  sandbox: boolean;
  /** Which CLI runs it (src/core/run/runtimes/). */
  runtime: RuntimeName;
  /** `fork`: it starts from a copy of the parent's conversation (`fork` below); a resumed task never does. */
  context: "fork" | "fresh";
  /** The finalize contract, with what its runtime and a cache-true fork make of it. */
  finalize: FinalizeMode;
  /** Keep what the child's commands leave running (recorded with pids; `subagents cancel ID` ends them later). */
  keepProcesses: boolean;
  /** Turns, tokens and dollars, key by key. */
  budget: Budget;
  /** Acceptance gate (gate.ts): a shell command that must exit 0, its timeout and retries. */
  gate?: GateSpec;
  /** JSON Schema of the structured result (output-schema.ts). */
  outputSchema?: Record<string, unknown>;
  /** `context: "fork"`: the parent's conversation (fork.ts, already cleaned) the child starts from. */
  fork?: ForkEntry[];
  /** A forked child that repeats its parent's request (system prompt, tools) as a cached prefix (fork.ts). */
  cacheTrueFork?: true;
  /** What the task asked for that its runtime cannot give (said in its windows and record). */
  notes: string[];
};

export type TaskOutcome = {
  sessionId: string;
  name: string;
  agent: string;
  result: RunResult;
};

/**
 * What the call wires into one task while it runs (not the user's shell hooks, which are task-hooks.ts): its
 * signal and callbacks, its place in the call's team and kept children, the call's spend and rate-limit gate, the
 * cap check before its child starts, and who answers its child's questions. The call runner (core/call/) builds it.
 */
export type TaskWiring = {
  /** Its run as its call recorded it, queued (core/call/runner.ts): the task starts that row, or ends it unstarted. */
  queuedRun?: number;
  signal?: AbortSignal;
  /** The call decided this task does not run: its project-local agent was refused, or a task it waits for
   *  (`after`) did not complete. It is recorded (a session of its own, marked as an error) and no child starts. */
  notRun?: { code: ErrorCode; message: string };
  onEvent?: (state: RunState, ev: ChildEvent) => void;
  /** Called once the session id and profile are known, before the child starts. */
  onStart?: (info: {
    sessionId: string;
    agent: string;
    profile: Profile | null;
    sessionFile: string;
    warnings: string[];
    /** Where and how its child runs: the runner, the sandbox, the CLI that runs it, its isolation. */
    placement: TaskPlacement;
  }) => void;
  /** Asks for a control pipe to the child (steer); see RunSpec.onControl. */
  onControl?: (send: ((line: string) => boolean) | null) => void;
  /** This task's place in its call's team (core/team.ts): siblings it can message; none for a lone task. */
  team?: TeamMember;
  /** The delegate call's shared maxCost (scheduler.ts). */
  callSpend?: CallSpend;
  /** The call's rate-limit gate (rate-gate.ts). */
  rateGate?: RateGate;
  /** This task's ticket to the call's kept children (process/pool.ts). */
  pool?: PoolTicket;
  /** Asked just before the child would start: a refusal (the session's cost cap, session-caps.ts) records the task
   *  as not started. Children already running are not affected. */
  startRefusal?: () => { code: ErrorCode; message: string } | null;
  /** Who answers the child's questions (ask.ts); none: "no one can answer now", recorded as a warning. */
  ask?: Asker;
  /** A background run's questions also wait for an answer through its owner (control/owner.ts), up to askTimeout;
   *  notify tells whoever should know that one was asked. */
  remoteAsk?: { notify?: (q: AskRequest) => void };
  /** The task started or ended (the object its hooks get on stdin): pi's front puts it on pi.events. */
  onTaskEvent?: (payload: TaskEventPayload) => void;
  /** The trace its child continues (TRACEPARENT, TRACESTATE in its environment), when the call is traced. */
  traceEnv?: Record<string, string>;
  /** Told when a stage of the task starts; what it returns, when the stage ends (a traced call times them). */
  onStage?: (stage: string) => () => void;
};

/** Where and how a task's child runs, as its preparation decided. */
export type TaskPlacement = { runner: string; sandbox: boolean; runtime: string; isolation?: IsolationMode };
