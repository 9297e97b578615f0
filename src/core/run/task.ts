// One task end to end: resolve its session (new or resumed), build the child's prompt and command, record the
// run before the child starts, run it, and always record a terminal status. Shared by the CLI and pi fronts.
import { abortStop, CANCELLED_BEFORE_START } from "./abort-reason.ts";
import { renderFiles, type FileSpec } from "../files.ts";
import type { Clock, Host } from "../host.ts";
import { buildInvocation } from "./invocation.ts";
import { resolveFinalizeMode, type FinalizeMode } from "./finalize-contract.ts";
import { findProfile, validateProfileSkills, type Profile } from "../profiles/profile.ts";
import { brokenProfile, type Diagnostic } from "../profiles/profile-discovery.ts";
import { runCheckpoints } from "./checkpoint.ts";
import { runChild, type RunLimits } from "./runner.ts";
import { discoverSkills, resolveProfileSkills, type Skill } from "../profiles/skills.ts";
import { readUserModels, resolveProfileModel, type UserModels } from "../profiles/model-resolve.ts";
import type { RunState } from "./run-state.ts";
import type { Settings } from "../settings.ts";
import type { Store } from "../store/store.ts";
import { formatResumePrompt, resumeNotFound, resumeRunning } from "../store/transcript.ts";
import type { ChildEvent, ErrorCode, RunResult } from "../types.ts";
import { emptyUsage } from "../types.ts";
import { sanitize } from "../sanitize.ts";
import { createIsolation, isolationProblem, type IsolationMode, type WorktreeHost } from "./isolation.ts";
import { rateGateFor, type RateGate } from "./rate-gate.ts";
import { afterFallback, didWork, FALLBACK_CONTINUE_TEXT, fallbackModels, modelFailed } from "./fallback.ts";
import { budgetMessage, mergeBudgets, type Budget, type CallSpend } from "../budget.ts";
import type { Asker } from "./ask.ts";

export type Engine = {
  host: Host;
  clock: Clock;
  store: Store;
  settings: Settings;
  profiles: Map<string, Profile>;
  agentDir: string;
  piCommand: string[];
  piEnv: Record<string, string>;
  /** Which pi runs the children (`pi 0.87.1 · node 24.21.0 · /path`), recorded with every run. */
  piDescribe?: string;
  /** The children's pi emits agent_settled (pi ≥ 0.80.4). */
  piSettles?: boolean;
  /** The parent pi's project-trust decision for its cwd (pi ≥ 0.8x); children in that tree inherit it. */
  projectTrust?: { cwd: string; trusted: boolean };
  /** The child extension file for `-e`; absent when the child's pi has it built in (the embedded pi). */
  childExtension?: string;
  /** Our own depth (0 for a user's CLI or top-level pi). */
  depth: number;
  parentSession?: string;
  limits?: Partial<RunLimits>;
  /** Discovered once per engine, and only when a profile asks for skills. */
  skills?: Map<string, Skill>;
  /** The parent's model ("provider/id"), what `model: inherit` means; unset in the CLI (pi's default). */
  parentModel?: string;
  /** Read once per engine from pi's files, when a task names a model. */
  userModels?: UserModels;
  /** Profile files that could not be used (discovery's diagnostics): a task naming one is told why. */
  profileProblems?: Diagnostic[];
  /** The parent pi's active tools, which a profile's deny list subtracts from (unset: pi's defaults). */
  parentTools?: string[];
  /** Git worktrees for `isolation: "worktree"` tasks (src/host/git-worktree.ts); unset: isolation fails. */
  worktrees?: WorktreeHost;
};

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
  return { status: "error", output: "", error: sanitize(message), errorCode: code, finalized: false, usage: emptyUsage(), exitCode: null, toolCount: 0, messages: [], stderrTail: "", durationMs: 0 };
}

export type TaskHooks = {
  signal?: AbortSignal;
  onEvent?: (state: RunState, ev: ChildEvent) => void;
  /** Called once the session id and profile are known, before the child starts. */
  onStart?: (info: { sessionId: string; agent: string; profile: Profile | null; sessionFile: string; warnings: string[] }) => void;
  /** Asks for a control pipe to the child (steer); see RunSpec.onControl. */
  onControl?: (send: ((line: string) => boolean) | null) => void;
  /** The delegate call's shared maxCost (scheduler.ts). */
  callSpend?: CallSpend;
  /** The call's rate-limit gate (rate-gate.ts). */
  rateGate?: RateGate;
  /** Who answers the child's questions (ask.ts); none: "no one can answer now", recorded as a warning. */
  ask?: Asker;
};

/** A task names a profile that is not loaded: refused (and why), or unknown (spec 000's text). */
export function profileRefusal(engine: Pick<Engine, "profiles" | "profileProblems">, name: string): TaskError {
  const broken = brokenProfile(engine.profileProblems, name);
  if (broken) return new TaskError(`Profile "${name}" (${broken.file}) cannot be used: ${broken.reason}`, "INVALID_INPUT", true);
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
export function chooseModel(engine: Engine, profile: Profile | null, requested: string | undefined): { model?: string | null; warning?: string } {
  const wanted = requested ?? profile?.model;
  if (!wanted) return {};
  engine.userModels ??= readUserModels(engine.host, engine.agentDir);
  const choice = resolveProfileModel(profile, wanted, { parentModel: engine.parentModel, aliases: engine.settings.modelAliases, user: engine.userModels });
  return { model: choice.model ?? null, warning: choice.warning };
}

/**
 * Why pi refused the model at start-up, when that is why the run failed (no model call was made): it did not
 * know the name, or it matched the name to a provider without credentials. Else null.
 */
function refusedModel(r: RunResult, model: string): string | null {
  if (r.status !== "error" || r.usage.turns > 0) return null;
  if (/Model "[^"]+" not found/.test(r.error ?? "")) return `model "${model}" is not known to pi here`;
  const provider = /No API key found for ([\w.-]+)/.exec(r.error ?? "")?.[1];
  return provider ? `model "${model}" is matched by pi to provider "${provider}", which has no credentials here` : null;
}

/** What a run does differently from its agent file, for the run header and record. */
function runWarnings(profile: Profile | null, modelWarning: string | undefined): string[] {
  const out: string[] = [];
  if (modelWarning) out.push(modelWarning);
  if (profile?.unavailableTools?.length) out.push(`tools not available here: ${profile.unavailableTools.join(", ")}`);
  return out;
}

/** The timeout that really applies to a task: its own, else its profile's, else the settings' (spec 000). */
export function effectiveTimeout(engine: Engine, input: Pick<TaskInput, "timeoutSec" | "profile">): number {
  const profile = input.profile ? findProfile(engine.profiles, input.profile) : undefined;
  return input.timeoutSec ?? profile?.timeout ?? engine.settings.timeout;
}

/** Why a session cannot be resumed now (spec 000's texts), or null. */
export function checkResumable(engine: Engine, id: string): string | null {
  const prior = engine.store.getSession(id);
  if (!prior || prior.runs.length === 0) return resumeNotFound(id);
  const last = prior.runs[prior.runs.length - 1];
  if (last.status === "running" && (last.ownerPid === null || engine.host.isAlive(last.ownerPid))) return resumeRunning(id);
  return null;
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
export function resolveTask(engine: Engine, input: TaskInput): { id: string; profile: Profile | null; agent: string; resumeOf: ReturnType<Store["getSession"]> } {
  if (input.refused) throw new TaskError(input.refused, "SUBAGENTS_DISABLED", true);
  const prior = input.resume ? engine.store.getSession(input.resume) : null;
  if (input.resume && (!prior || prior.runs.length === 0)) throw new TaskError(resumeNotFound(input.resume), "INVALID_INPUT");
  const profileName = input.profile ?? (prior && prior.agent !== "default" ? prior.agent : undefined);
  const profile = profileName ? (findProfile(engine.profiles, profileName) ?? null) : null;
  if (profileName && !profile) throw profileRefusal(engine, profileName);
  const id = input.resume ?? input.sessionId ?? engine.store.newSessionId();
  return { id, profile, agent: profile?.name ?? "default", resumeOf: prior };
}

/** The parent's trust decision applies to its own folder and everything under it; elsewhere pi's own rules decide. */
export function trustFor(trust: Engine["projectTrust"], cwd: string): "yes" | "no" | undefined {
  if (!trust) return undefined;
  const root = trust.cwd.endsWith("/") ? trust.cwd : `${trust.cwd}/`;
  if (cwd !== trust.cwd && !cwd.startsWith(root)) return undefined;
  return trust.trusted ? "yes" : "no";
}

export async function runTask(engine: Engine, input: TaskInput, hooks: TaskHooks = {}): Promise<TaskOutcome> {
  const { host, store, settings } = engine;
  let resolved: ReturnType<typeof resolveTask>;
  try {
    resolved = resolveTask(engine, input);
  } catch (err) {
    if (!(err instanceof TaskError)) throw err;
    const id = input.sessionId ?? store.newSessionId();
    const agent = input.profile ?? "default";
    const result = failedResult(err.message, err.code);
    if (err.recordSession) {
      try {
        if (!store.getSession(id)) store.createSession({ id, name: input.name, agent, cwd: input.cwd, parentSession: engine.parentSession });
        store.finishRun(store.startRun(id, { prompt: input.prompt, ownerPid: host.pid, name: input.name }), result);
      } catch {
        // the session (a resumed one) is running elsewhere: the refusal is still returned, just not recorded
      }
    }
    return { sessionId: id, name: input.name, agent, result };
  }
  const { id, profile, agent, resumeOf } = resolved;
  // A resumed isolated session is isolated again: its pi session file names the worktree as its cwd, which is
  // made again at the same path (worktrees are named for the session).
  const isolation = input.isolation ?? profile?.isolation ?? (resumeOf?.runs.at(-1)?.isolation ? "worktree" : undefined);
  // A cwd outside any git repository fails here: before anything is recorded, created or run.
  const notIsolable = isolation ? await isolationProblem(engine.worktrees, input.cwd) : null;
  if (notIsolable) return { sessionId: id, name: input.name, agent, result: failedResult(notIsolable, "ISOLATION_FAILED") };
  const sessionFile = resumeOf?.sessionFile ?? childSessionFile(engine.agentDir, input.cwd, agent, id);
  const canContinue = !!resumeOf && !!host.stat(sessionFile)?.isFile;

  let prompt = input.prompt;
  if (input.files?.length) prompt = `${renderFiles(host, input.files, input.cwd)}${prompt}`;
  if (resumeOf && !canContinue) {
    // The child's own session file is gone: fall back to the transcript of what it did (spec 000).
    const runs = resumeOf.runs.map((r) => ({ ...r, messages: store.getMessages(r.id) }));
    prompt = formatResumePrompt(runs, prompt);
  }
  // A sticky id the store holds without runs (a refused first attempt) is taken over, not created twice.
  if (!resumeOf && store.getSession(id)) store.setSessionFile(id, sessionFile);
  else if (!resumeOf) store.createSession({ id, name: input.name, agent, cwd: input.cwd, parentSession: engine.parentSession, sessionFile });
  let runId: number;
  try {
    runId = store.startRun(id, { prompt: input.prompt, ownerPid: host.pid, pi: engine.piDescribe, name: input.name });
  } catch (err) {
    // The session is running elsewhere (spec 000's resume refusal): nothing was started, nothing to record.
    return { sessionId: id, name: input.name, agent, result: failedResult((err as Error).message, "INVALID_INPUT") };
  }
  const model = chooseModel(engine, profile, input.model);
  const warnings = runWarnings(profile, model.warning);
  hooks.onStart?.({ sessionId: id, agent, profile, sessionFile, warnings });
  if (hooks.signal?.aborted) {
    const stop = abortStop(hooks.signal.reason, false);
    const result = failedResult(stop.message, stop.code);
    store.finishRun(runId, result);
    return { sessionId: id, name: input.name, agent, result };
  }
  const callHit = hooks.callSpend?.hit();
  if (callHit) {
    // The call's money is spent: a task still waiting to start does not start.
    const result = failedResult(`${budgetMessage(callHit)}: not started`, "BUDGET_EXCEEDED");
    store.finishRun(runId, result);
    return { sessionId: id, name: input.name, agent, result };
  }

  let skills: { skillPaths: string[]; appendPrompt: string } = { skillPaths: [], appendPrompt: "" };
  if (profile && (profile.suggestedSkills?.length || profile.loadSkills?.length)) {
    engine.skills ??= discoverSkills(host, { agentDir: engine.agentDir, cwd: input.cwd });
    const resolved = resolveProfileSkills(host, profile, engine.skills);
    if ("error" in resolved) {
      // Unknown skills fail this task only; the others go on (spec 000).
      const result = failedResult(resolved.error, "INVALID_INPUT");
      store.finishRun(runId, result);
      return { sessionId: id, name: input.name, agent, result };
    }
    skills = resolved;
  }
  const iso = isolation ? await createIsolation(engine.worktrees!, { cwd: input.cwd, id, name: input.name }) : null;
  if (iso && "error" in iso) {
    const result = failedResult(iso.error, "ISOLATION_FAILED");
    store.finishRun(runId, result);
    return { sessionId: id, name: input.name, agent, result };
  }
  const childCwd = iso?.worktree.cwd ?? input.cwd;
  // A call's gate comes from the scheduler; a lone task (`run`, `subagent`) gets its own.
  const rateGate = hooks.rateGate ?? rateGateFor(1, engine.clock, settings.rateLimitWait);
  const checkpoints = runCheckpoints(store, engine.clock, runId);
  const finalize = resolveFinalizeMode(profile?.finalize, settings.finalize, input.finalize ?? "optional");
  let result: RunResult;
  const attempt = async (childModel: string | null | undefined, stdin = prompt, spentBefore?: RunResult["usage"]): Promise<RunResult> => {
    host.mkdirp(`${engine.agentDir}/subagent-sessions/${cwdSlug(input.cwd)}`);
    const inv = buildInvocation({
      piCommand: engine.piCommand,
      childExtension: engine.childExtension,
      profile,
      transport: settings.transport,
      finalize,
      sessionFile,
      model: childModel,
      depth: engine.depth + 1,
      maxDepth: settings.maxDepth,
      parentPid: host.pid,
      parentTools: engine.parentTools,
      promptFile: `${host.privateTempDir()}/${id}-${runId}.md`,
      skillPaths: skills.skillPaths,
      appendPrompt: skills.appendPrompt || undefined,
      projectTrust: trustFor(engine.projectTrust, input.cwd),
      baseEnv: { ...host.env, ...engine.piEnv },
    });
    if (iso) iso.scrubEnv(inv.env);
    for (const f of inv.files) host.writeFile(f.path, f.content, 0o600);
    try {
      if (!host.stat(childCwd)?.isDirectory) throw new TaskError(`Working directory does not exist: ${childCwd}`, "INVALID_INPUT");
      return await runChild(host, engine.clock, {
        argv: inv.argv,
        env: inv.env,
        sessionFile,
        cwd: childCwd,
        prompt: stdin,
        transport: settings.transport,
        finalize,
        timeoutSec: effectiveTimeout(engine, { timeoutSec: input.timeoutSec, profile: profile?.name }),
        extendDebounceSec: settings.extendTimeoutDebounce,
        maxRuntimeSec: settings.maxRuntime,
        loopingToolCount: settings.loopingToolCount,
        budget: mergeBudgets(input.budget, profile ?? undefined),
        callSpend: hooks.callSpend && { spend: hooks.callSpend, key: id },
        spentBefore,
        rateGate,
        limits: engine.limits,
        settles: engine.piSettles,
        signal: hooks.signal,
        onEvent: (state, ev) => {
          hooks.onEvent?.(state, ev);
          checkpoints.update(state);
        },
        onControl: hooks.onControl,
        ask: { asker: hooks.ask, mode: settings.ask, timeoutSec: settings.askTimeout, sessionId: id, label: input.name ?? agent },
      });
    } finally {
      for (const f of inv.files) host.remove(f.path);
    }
  };
  try {
    result = await attempt(model.model);
    let refused = model.model ? refusedModel(result, model.model) : null;
    let failedModel = result.model ?? model.model ?? "the default model";
    for (const next of fallbackModels(profile, settings)) {
      if (hooks.signal?.aborted || !(refused || modelFailed(result))) break;
      const choice = chooseModel(engine, profile, next);
      const warning = `model ${failedModel} failed (${refused ?? result.error}): continued on ${choice.model ?? next}`;
      // Work the failed model already did is kept: its session goes on. Without any, the task starts over.
      const stdin = didWork(result) && host.stat(sessionFile)?.isFile ? FALLBACK_CONTINUE_TEXT : prompt;
      result = afterFallback(result, failedModel, await attempt(choice.model, stdin, result.usage), warning);
      refused = choice.model ? refusedModel(result, choice.model) : null;
      failedModel = result.model ?? choice.model ?? next;
    }
    if (refused && !hooks.signal?.aborted) {
      // pi could not use the model and exited before any model call: run on the default model instead, and say so.
      warnings.unshift(`${refused}: running on ${engine.userModels?.defaultModel ?? "pi's default model"} instead (map it with subagents.modelAliases)`);
      result = await attempt(null);
    }
  } catch (err) {
    result = err instanceof TaskError ? failedResult(err.message, err.code) : failedResult(`Sub-agent failed: ${(err as Error).message}`, "SUBAGENT_FAILED");
  } finally {
    checkpoints.stop();
  }
  if (warnings.length) result.warnings = [...warnings, ...(result.warnings ?? [])];
  if (iso) result.isolation = await iso.finish();
  store.finishRun(runId, result);
  if (result.sessionFile && result.sessionFile !== sessionFile) store.setSessionFile(id, result.sessionFile);
  return { sessionId: id, name: input.name, agent, result };
}
