// Stage "prepare": what a task needs before anything runs, from what the call resolved (core/call/resolve.ts) —
// its session (new or resumed) and agent file, whether it can be isolated, the child's prompt (files, resume
// transcript), the run record, the model and the project trust. It decides nothing the resolution decided. Ends
// that come before a run record are returned as outcomes.
import { renderFiles } from "../files.ts";
import type { Profile } from "../profiles/profile.ts";
import type { SessionStore } from "../store/store-types.ts";
import { formatResumePrompt, resumeNotFound } from "../store/transcript.ts";
import { isolationProblem } from "./launch/isolation.ts";
import { childSessionFile, runOwner } from "./session-file.ts";
import { failedResult, TaskError } from "./task-error.ts";
import { agentFile } from "./agent-file.ts";
import type { Engine } from "./engine.ts";
import type { ResolvedTask, TaskOutcome, TaskWiring } from "./task-types.ts";
import { taskOutcome, type TaskContext } from "./task-context.ts";
import { placeOf } from "./runners/where.ts";
import { fireTaskEvent } from "./task-hooks.ts";
import { StoreError } from "../store/store-error.ts";

export async function prepareTask(
  engine: Engine,
  input: ResolvedTask,
  wiring: TaskWiring,
): Promise<{ task: TaskContext } | { outcome: TaskOutcome }> {
  const { host, store, settings } = engine;
  let resolved: ReturnType<typeof startingTask>;
  try {
    resolved = startingTask(engine, input, wiring.notRun);
  } catch (err) {
    if (!(err instanceof TaskError)) throw err;
    return { outcome: refuse(engine, input, err, wiring) };
  }
  const { id, profile, agent, resumeOf } = resolved;
  // A cwd outside any git repository fails here: before anything is recorded, created or run.
  const notIsolable = input.isolation ? await isolationProblem(engine.worktrees, input.cwd) : null;
  if (notIsolable) return { outcome: taskOutcome({ id, input, agent }, failedResult(notIsolable, "ISOLATION_FAILED")) };
  const sessionFile = resumeOf?.sessionFile ?? childSessionFile(engine.agentDir, input.cwd, agent, id);
  const canContinue = !!resumeOf && !!host.stat(sessionFile)?.isFile;

  let prompt = input.prompt;
  if (input.files?.length) prompt = `${renderFiles(host, input.files, input.cwd)}${prompt}`;
  if (resumeOf && !canContinue) {
    // The child's own session file is gone: fall back to the transcript of what it did .
    const runs = resumeOf.runs.map((r) => ({ ...r, messages: store.getMessages(r.id) }));
    prompt = formatResumePrompt(runs, prompt);
  }
  try {
    // Its session was recorded with its queued run; a new one learns its session file now.
    if (!resumeOf) store.setSessionFile(id, sessionFile);
  } catch (err) {
    // Nothing runs that could not be recorded: the task fails with the store's one line and code.
    if (err instanceof StoreError)
      return { outcome: taskOutcome({ id, input, agent }, failedResult(err.message, err.code)) };
    throw err;
  }
  const where = placeOf(input);
  const runId = queuedRun(wiring);
  try {
    // The record says what ran the child (which pi, or the other harness's CLI), and where.
    store.startQueued(runId, {
      prompt: input.prompt,
      ...runOwner(host),
      pi: input.runtime === "pi" ? engine.piDescribe : input.runtime,
      name: input.name,
      sandbox: where.sandbox,
      runner: where.runner.name,
    });
  } catch (err) {
    // The session is running elsewhere (the resume refusal), or the store failed: nothing was started.
    const code = err instanceof StoreError ? err.code : "INVALID_INPUT";
    return { outcome: taskOutcome({ id, input, agent }, failedResult((err as Error).message, code)) };
  }
  const model = input.modelChoice;
  const warnings = runWarnings(profile, model.warning);
  warnings.push(...where.notes);
  warnings.push(...input.notes);
  wiring.onStart?.({
    sessionId: id,
    agent,
    profile,
    sessionFile,
    warnings,
    placement: {
      runner: where.runner.name,
      sandbox: where.sandbox,
      runtime: input.runtime,
      isolation: input.isolation,
    },
  });
  fireTaskEvent(engine, wiring, profile, runId, { sessionId: id, name: input.name, agent, cwd: input.cwd });
  return {
    task: {
      engine,
      input,
      wiring,
      id,
      agent,
      profile,
      resumeOf,
      sessionFile,
      prompt,
      runId,
      model,
      warnings,
      trust: input.trust,
      where,
      transport: where.runner.transport ?? settings.transport,
      skills: { skillPaths: [], appendPrompt: "" },
      iso: null,
      cwd: input.cwd,
      result: null,
    },
  };
}

/** The run its call queued for it: every task runs from one (core/call/runner.ts). */
function queuedRun(wiring: TaskWiring): number {
  if (wiring.queuedRun === undefined) throw new Error("a task runs from the run its call queued (core/call/runner.ts)");
  return wiring.queuedRun;
}

/** A task refused before it started: its queued run ends with why (the one way a task that never started is
 *  recorded), and its hooks hear of it when the refusal says so. */
function refuse(engine: Engine, input: ResolvedTask, err: TaskError, wiring: TaskWiring): TaskOutcome {
  const id = input.sessionId;
  const { agent } = input;
  const result = failedResult(err.message, err.code);
  const runId = queuedRun(wiring);
  try {
    engine.store.finishQueued(runId, result);
  } catch {
    // the store is failing: the refusal is still returned (the next store that opens says it never started)
  }
  // Whoever pages on failures hears of a task that never started too (an unknown agent in a nightly schedule).
  if (err.tellHooks)
    fireTaskEvent(engine, wiring, null, runId, { sessionId: id, name: input.name, agent, cwd: input.cwd }, result);
  return { sessionId: id, name: input.name, agent, result };
}

/** What a run does differently from its agent file, for the run header and record. */
function runWarnings(profile: Profile | null, modelWarning: string | undefined): string[] {
  const out: string[] = [];
  if (modelWarning) out.push(modelWarning);
  const tools = profile?.unavailableTools?.length
    ? `tools not available here: ${profile.unavailableTools.join(", ")}`
    : null;
  if (tools) out.push(tools);
  // What the agent file itself loaded with (front matter that is not strict YAML, fields it could not use): said
  // where the run is shown, not only by `profiles` — a run on broken YAML may not be the run its author meant.
  const file = profile?.filePath ? basename(profile.filePath) : `agent ${profile?.name}`;
  for (const w of profile?.warnings ?? []) if (w !== tools) out.push(`${file}: ${w}`);
  return out;
}

const basename = (p: string) => p.slice(p.lastIndexOf("/") + 1);

/**
 * Who the task is, from what the call resolved: its agent file (looked up by name), and the session it resumes
 * (gone since the call was prepared: it ends). A task the call does not run ends here. Throws TaskError.
 */
function startingTask(
  engine: Engine,
  input: Pick<ResolvedTask, "sessionId" | "agent" | "resume">,
  notRun?: TaskWiring["notRun"],
): { id: string; profile: Profile | null; agent: string; resumeOf: ReturnType<SessionStore["getSession"]> } {
  if (notRun) throw new TaskError(notRun.message, notRun.code, true);
  const recorded = input.resume ? engine.store.getSession(input.resume) : null;
  // Its own run, queued when the call accepted it, is not part of what it resumes.
  const prior = recorded && { ...recorded, runs: recorded.runs.filter((r) => r.status !== "queued") };
  if (input.resume && (!prior || prior.runs.length === 0))
    throw new TaskError(resumeNotFound(input.resume), "INVALID_INPUT");
  const profile = agentFile(engine, input.agent) ?? null;
  return { id: input.sessionId, profile, agent: input.agent, resumeOf: prior };
}
