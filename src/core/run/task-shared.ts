// What a task's stages share: the engine and task shapes, and the small rules every stage uses (refusals, the
// model, timeouts, trust). task.ts runs the stages and re-exports all of this, so the stages never import task.ts.
import type { TeamMember } from "../team.ts";
import { CANCELLED_BEFORE_START } from "./process/abort-reason.ts";
import type { FileSpec } from "../files.ts";
import type { Clock, Host } from "../host.ts";
import type { FinalizeMode } from "./process/finalize-contract.ts";
import { findProfile, validateProfileSkills, type Profile } from "../profiles/profile.ts";
import { brokenProfile, type Diagnostic } from "../profiles/profile-discovery.ts";
import type { RunLimits } from "./process/runner.ts";
import type { Skill } from "../profiles/skills.ts";
import { readUserModels, resolveProfileModel, type UserModels } from "../profiles/model-resolve.ts";
import type { RunState } from "./process/run-state.ts";
import type { Settings } from "../settings.ts";
import type { RunRecord, SessionStore } from "../store/store-types.ts";
import { resumeNotFound, resumeRunning } from "../store/transcript.ts";
import type { ChildEvent, ErrorCode, RunResult } from "../types.ts";
import { emptyUsage } from "../types.ts";
import { sanitize } from "../sanitize.ts";
import type { IsolationMode, WorktreeHost } from "./launch/isolation.ts";
import type { RateGate } from "./process/rate-gate.ts";
import type { PoolTicket } from "./process/pool.ts";
import type { Budget, CallSpend } from "../budget.ts";
import type { McpServer } from "./launch/mcp-config.ts";
import type { RunnerName } from "./runners/types.ts";
import type { RuntimeName } from "../runtime-names.ts";
import type { Asker, AskRequest } from "./process/ask.ts";
import type { ParentPrompt } from "./launch/parent-prompt.ts";
import type { TaskEventPayload } from "./hooks/payload.ts";
export type { ParentPrompt };

/** One entry of a pi session file (its branch is what a forked child starts from: fork.ts). */
export type ForkEntry = { type: string; id: string; parentId: string | null; [k: string]: unknown };

/**
 * What a call runs on: the host, store, settings and profiles, which pi its children run, and this call's context
 * and caches. Built by createEngine (engine.ts) from those parts and the call's context; nothing fills it in later
 * except the caches, which the stages fill once per call.
 */
export type Engine = EngineParts & {
  /** What the call's front knows of its parent (pi's session, model, tools, trust); empty in the CLI. */
  call: CallContext;
  /** Read once per call, when a task first needs it. */
  caches: CallCaches;
};

/** The parts of an engine that come from settings and the environment (no call in them). */
export type EngineParts = {
  host: Host;
  clock: Clock;
  store: SessionStore;
  settings: Settings;
  profiles: Map<string, Profile>;
  /** Profile files that could not be used (discovery's diagnostics): a task naming one is told why. */
  profileProblems?: Diagnostic[];
  agentDir: string;
  piCommand: string[];
  piEnv: Record<string, string>;
  /** Our executable's command (its `net-forward` role forwards a sandboxed child's connections when the child is
   *  not our pi: runners/network.ts); unset when there is none (then only our pi can have a closed network). */
  netForwarder?: string[];
  /** Which pi runs the children (`pi 0.87.1 · node 24.21.0 · /path`), recorded with every run. */
  piDescribe?: string;
  /** The children's pi emits agent_settled (pi ≥ 0.80.4). */
  piSettles?: boolean;
  /** The children's pi version ("" unknown): which flags and powers (MCP, --exclude-tools) it has. */
  piVersion?: string;
  /** The child extension file for `-e`; absent when the child's pi has it built in (the embedded pi). */
  childExtension?: string;
  /** Our own depth (0 for a user's CLI or top-level pi). */
  depth: number;
  limits?: Partial<RunLimits>;
  /** Git worktrees for `isolation: "worktree"` tasks (src/host/git-worktree.ts); unset: isolation fails. */
  worktrees?: WorktreeHost;
  /** Names of the given MCP servers that do not answer (src/host/mcp-probe.ts); unset: nothing is probed. */
  mcpProbe?: (servers: McpServer[], cwd: string) => Promise<string[]>;
};

export type CallContext = {
  /** The parent pi session's id: recorded with each child's session, named in a forked copy's header. */
  parentSession?: string;
  /** The parent pi's project-trust decision for its cwd (pi ≥ 0.8x); children in that tree inherit it. */
  projectTrust?: { cwd: string; trusted: boolean };
  /** The parent's model ("provider/id"), what `model: inherit` means; unset in the CLI (pi's default). */
  parentModel?: string;
  /** The parent pi's active tools, which a profile's deny list subtracts from (unset: pi's defaults). */
  parentTools?: string[];
  /** The parent pi's system prompt and tool definitions at call time (a cache-true fork repeats them: fork.ts). */
  parentPrompt?: ParentPrompt;
  /** The schedule this call runs for (`subagents schedule`): recorded with its sessions, told to hooks. */
  schedule?: string;
  /** Whether a project's hooks may run in this call: "allowed", or why not (the front asked); unset: the user's
   *  subagents.projectAgents decides (task-hooks.ts). */
  projectHooks?: "allowed" | string;
};

export type CallCaches = {
  /** Discovered only when a profile asks for skills. */
  skills?: Map<string, Skill>;
  /** Read from pi's files when a task names a model. */
  userModels?: UserModels;
  /** MCP probe results (one probe per call), keyed by folder and servers. */
  mcpDead?: Map<string, Promise<string[]>>;
  /** Task hooks still running (task-hooks.ts): the front waits for them before it exits (settleHooks). */
  hooksRunning?: Set<Promise<unknown>>;
};

/** The one way an engine is made: its parts, and the call it serves. */
export function createEngine<P extends EngineParts>(parts: P, call: CallContext = {}): P & Engine {
  return { ...parts, call, caches: {} };
}

export type TaskInput = {
  name: string;
  prompt: string;
  cwd: string;
  /** Profile name; undefined means pi's defaults. */
  profile?: string;
  model?: string;
  timeoutSec?: number;
  resume?: string;
  files?: FileSpec[];
  /** A session id chosen up front (the scheduler shows ids before tasks start). */
  sessionId?: string;
  /** Why this task may not run at all (its project-local profile was refused): it fails at once, alone. */
  refused?: string;
  /** The front's finalize contract when neither the profile nor the settings choose one (default optional). */
  finalize?: FinalizeMode;
  /** Run in a git worktree of cwd's repository; the task's changes end on a branch of their own. */
  isolation?: IsolationMode;
  /** The task's own budgets (each wins over its profile's). */
  budget?: Budget;
  /** Names of tasks of the same call this one waits for (dag.ts); `{{name}}` in the prompt is their output. */
  after?: string[];
  /** Set by the scheduler when a task in `after` did not complete: recorded as skipped, no child starts. */
  skipped?: string;
  /** Acceptance gate (gate.ts): a shell command that must exit 0; each wins over the profile's. */
  gate?: string;
  gateTimeout?: number;
  gateRetries?: number;
  /** JSON Schema of the structured result (output-schema.ts); wins over the profile's. Makes finalize required. */
  outputSchema?: Record<string, unknown>;
  /** `context: "fork"`: the parent's conversation (fork.ts, already cleaned) the child starts from. */
  fork?: ForkEntry[];
  /** Keep what the child's commands leave running (recorded with pids; `subagents cancel ID` ends them later). */
  keepProcesses?: boolean;
  /** Run in the sandbox (src/core/run/runners/sandbox.ts); the settings' "on" cannot be turned off. */
  sandbox?: boolean;
  /** Where the child runs (src/core/run/runners/). */
  runner?: RunnerName;
  /** Which CLI runs it (src/core/run/runtimes/); unset: the agent file's, else pi. */
  runtime?: RuntimeName;
};

export type TaskOutcome = {
  sessionId: string;
  name: string;
  agent: string;
  result: RunResult;
};

export const CANCELLED_MESSAGE = CANCELLED_BEFORE_START;

export class TaskError extends Error {
  constructor(
    message: string,
    readonly code: ErrorCode,
    /** Spec 000: a task refused for its profile still gets a session marked as error, to be looked up later. */
    readonly recordSession = false,
  ) {
    super(message);
  }
}

/** pi's own convention for per-cwd folders: `/a/b` → `--a-b--`. */
export function cwdSlug(cwd: string): string {
  return `--${cwd.replace(/^[/\\]+/, "").replace(/[/\\:]+/g, "-")}--`;
}

export function childSessionFile(agentDir: string, cwd: string, agent: string, id: string): string {
  const safeAgent = agent.replace(/[^A-Za-z0-9_.-]/g, "_") || "default";
  return `${agentDir}/subagent-sessions/${cwdSlug(cwd)}/${safeAgent}_${id}.jsonl`;
}

/** A task that ended before or without a child. Its message can name files (a profile, a cwd): masked like all. */
export function failedResult(message: string, code: ErrorCode): RunResult {
  return {
    status: "error",
    output: "",
    error: sanitize(message),
    errorCode: code,
    finalized: false,
    usage: emptyUsage(),
    exitCode: null,
    toolCount: 0,
    messages: [],
    stderrTail: "",
    durationMs: 0,
  };
}

export type TaskHooks = {
  signal?: AbortSignal;
  onEvent?: (state: RunState, ev: ChildEvent) => void;
  /** Called once the session id and profile are known, before the child starts. */
  onStart?: (info: {
    sessionId: string;
    agent: string;
    profile: Profile | null;
    sessionFile: string;
    warnings: string[];
  }) => void;
  /** Asks for a control pipe to the child (steer); see RunSpec.onControl. */
  onControl?: (send: ((line: string) => boolean) | null) => void;
  /** This task's place in its call's team (core/team.ts): siblings it can message; none for a lone task. */
  team?: TeamMember;
  /** The delegate call's shared maxCost (scheduler.ts). */
  callSpend?: CallSpend;
  /** The call's rate-limit gate (rate-gate.ts). */
  rateGate?: RateGate;
  /** This task's ticket to the call's kept children (child/pool.ts). */
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
};

/** A task names a profile that is not loaded: refused (and why), or unknown (`Unknown profile: …`). */
export function profileRefusal(engine: Pick<Engine, "profiles" | "profileProblems">, name: string): TaskError {
  const broken = brokenProfile(engine.profileProblems, name);
  if (broken)
    return new TaskError(`Profile "${name}" (${broken.file}) cannot be used: ${broken.reason}`, "INVALID_INPUT", true);
  return new TaskError(unknownProfile(name, engine.profiles), "UNKNOWN_AGENT", true);
}

export function unknownProfile(name: string, profiles: Map<string, Profile>): string {
  const names = [...profiles.keys()].sort();
  return `Unknown profile: "${name}". Available profiles: ${names.length ? names.join(", ") : "(none)"}`;
}

/**
 * The model a task runs on: the task's or profile's `model` as its author meant it (model-resolve.ts).
 * `model: null` means "no --model" (pi's default) even when the profile names one; undefined leaves the
 * profile's provider-only setting to the invocation.
 */
export function chooseModel(
  engine: Engine,
  profile: Profile | null,
  requested: string | undefined,
): { model?: string | null; warning?: string } {
  const wanted = requested ?? profile?.model;
  if (!wanted) return {};
  engine.caches.userModels ??= readUserModels(engine.host, engine.agentDir);
  const choice = resolveProfileModel(profile, wanted, {
    parentModel: engine.call.parentModel,
    aliases: engine.settings.modelAliases,
    user: engine.caches.userModels,
  });
  return { model: choice.model ?? null, warning: choice.warning };
}

/** The timeout that really applies to a task: its own, else its profile's, else the settings'. */
export function effectiveTimeout(engine: Engine, input: Pick<TaskInput, "timeoutSec" | "profile">): number {
  const profile = input.profile ? findProfile(engine.profiles, input.profile) : undefined;
  return input.timeoutSec ?? profile?.timeout ?? engine.settings.timeout;
}

/** Why a session cannot be resumed now (docs/pi-extension.md "Task fields"), or null. */
export function checkResumable(engine: Engine, id: string): string | null {
  const prior = engine.store.getSession(id);
  if (!prior || prior.runs.length === 0) return resumeNotFound(id);
  const last = prior.runs[prior.runs.length - 1];
  if (last.status === "running" && (last.ownerPid === null || ownerRuns(engine.host, last))) return resumeRunning(id);
  return null;
}

/** A run's owner still runs: its PID, and the same process when its start time was recorded (never a bare PID). */
export function ownerRuns(
  host: Pick<Host, "isAlive" | "startTimeOf">,
  run: Pick<RunRecord, "ownerPid" | "ownerStart">,
) {
  if (run.ownerPid === null || !host.isAlive(run.ownerPid)) return false;
  const now = run.ownerStart === null ? null : (host.startTimeOf?.(run.ownerPid) ?? null);
  return now === null || now === run.ownerStart;
}

/**
 * Spec 000: a profile with conflicting skill settings fails the whole call before anything starts.
 * Returns the first problem among the named profiles, or null.
 */
export function checkProfileSkills(engine: Engine, names: (string | undefined)[]): string | null {
  for (const name of new Set(names)) {
    const p = name ? findProfile(engine.profiles, name) : undefined;
    const problem = p ? validateProfileSkills(p) : null;
    if (problem) return problem;
  }
  return null;
}

/** Checks that need no child: unknown profile, resume target. Throws TaskError. */
export function resolveTask(
  engine: Engine,
  input: TaskInput,
): { id: string; profile: Profile | null; agent: string; resumeOf: ReturnType<SessionStore["getSession"]> } {
  if (input.refused) throw new TaskError(input.refused, "SUBAGENTS_DISABLED", true);
  if (input.skipped) throw new TaskError(input.skipped, "SKIPPED", true);
  const prior = input.resume ? engine.store.getSession(input.resume) : null;
  if (input.resume && (!prior || prior.runs.length === 0))
    throw new TaskError(resumeNotFound(input.resume), "INVALID_INPUT");
  const profileName = input.profile ?? (prior && prior.agent !== "default" ? prior.agent : undefined);
  const profile = profileName ? (findProfile(engine.profiles, profileName) ?? null) : null;
  if (profileName && !profile) throw profileRefusal(engine, profileName);
  const id = input.resume ?? input.sessionId ?? engine.store.newSessionId();
  return { id, profile, agent: profile?.name ?? "default", resumeOf: prior };
}

/** The parent's trust decision applies to its own folder and everything under it; elsewhere pi's own rules decide. */
export function trustFor(trust: CallContext["projectTrust"], cwd: string): "yes" | "no" | undefined {
  if (!trust) return undefined;
  const root = trust.cwd.endsWith("/") ? trust.cwd : `${trust.cwd}/`;
  if (cwd !== trust.cwd && !cwd.startsWith(root)) return undefined;
  return trust.trusted ? "yes" : "no";
}
