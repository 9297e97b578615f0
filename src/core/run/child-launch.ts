// How one attempt of a task's child is launched: its command (our pi, or another harness's CLI), where it runs (the
// runner and the sandbox place it), and the run itself (process/runner.ts) with what the call wired into the task.
// The run stage (task-child.ts) calls the launcher once, or again per fallback model (fallback.ts).
import type { RunResult, Usage } from "../types.ts";
import { buildInvocation, type Invocation } from "./launch/invocation.ts";
import type { ChildMcp } from "./mcp-select.ts";
import type { ParentPrompt } from "./launch/parent-prompt.ts";
import type { runCheckpoints } from "./process/checkpoint.ts";
import { composeEnv } from "./process/gate.ts";
import type { FinalizeMode } from "./process/finalize-contract.ts";
import { rpcArgv } from "./process/pool.ts";
import type { RateGate } from "./process/rate-gate.ts";
import { runChild } from "./process/runner.ts";
import type { RunSpec } from "./process/run-spec.ts";
import { wrapForRunner } from "./runners/where.ts";
import type { Placed } from "./runners/types.ts";
import { foreignInvocation, type ForeignInvocation } from "./runtimes/invoke.ts";
import type { ForeignRuntimeName } from "./runtimes/types.ts";
import { expectedDefaultModel } from "./default-model.ts";
import { childAuthFor, childNetwork, notePlacement } from "./child-notes.ts";
import { confined } from "./runners/where.ts";
import { cwdSlug } from "./session-file.ts";
import { failedResult, TaskError } from "./task-error.ts";
import type { TaskContext } from "./task-context.ts";
import type { Worktree } from "./launch/isolation.ts";

/** One attempt: the model it runs on, what the child reads on stdin, and what earlier attempts spent. */
export type Launch = (model: string | null | undefined, stdin?: string, spentBefore?: Usage) => Promise<RunResult>;

/** What every attempt of a task shares, decided once by the run stage. */
export type LaunchPlan = {
  /** MCP servers for a pi 1.x child (mcp-select.ts). */
  mcp: ChildMcp;
  /** A cache-true fork's system prompt (fork.ts); unset for a child's own prompt. */
  forkPrompt?: ParentPrompt;
  finalize: FinalizeMode;
  rateGate: RateGate;
  checkpoints: ReturnType<typeof runCheckpoints>;
};

export function childLauncher(task: TaskContext, plan: LaunchPlan): Launch {
  const { engine, input, id, runId, sessionFile, prompt, iso, warnings } = task;
  const tree = iso?.worktree ?? task.inPlace?.worktree;
  const { host } = engine;
  return async (childModel, stdin = prompt, spentBefore) => {
    host.mkdirp(`${engine.agentDir}/subagent-sessions/${cwdSlug(input.cwd)}`);
    const foreign = input.runtime === "pi" ? null : foreignChild(task, childModel);
    if (typeof foreign === "string") return failedResult(foreign, "RUNTIME_MISSING");
    const inv: Invocation = foreign ?? piInvocation(task, plan, childModel);
    for (const w of inv.warnings ?? []) if (!warnings.includes(w)) warnings.push(w);
    if (iso) iso.scrubEnv(inv.env);
    Object.assign(inv.env, composeEnv(input));
    // A traced call: the child (and what it starts: a nested subagents, a test run, another harness) continues the
    // trace under this task's span; untraced, it inherits whatever trace our own environment carries.
    if (task.wiring.traceEnv) {
      delete inv.env.TRACESTATE;
      // PI_SUBAGENT_TRACED: a kept child makes each later task's TRACEPARENT from its session (child-extension).
      Object.assign(inv.env, task.wiring.traceEnv, { PI_SUBAGENT_TRACED: "1" });
    }
    // pi's own temp files (a long bash output's full log, pi-bash-*.log) and what the child's commands put in
    // $TMPDIR go to a folder of this run, removed with it; a sandbox or a container has a private /tmp already.
    const runTmp = runTempDir(task);
    if (runTmp) {
      host.mkdirp(runTmp);
      inv.env.TMPDIR = runTmp;
    }
    let placed: Placed | string | undefined;
    try {
      for (const f of inv.files) host.writeFile(f.path, f.content, 0o600);
      if (!host.stat(task.cwd)?.isDirectory)
        throw new TaskError(`Working directory does not exist: ${task.cwd}`, "INVALID_INPUT");
      placed = await wrapForRunner(task.where, {
        host,
        argv: inv.argv,
        env: inv.env,
        cwd: task.cwd,
        sessionFile,
        agentDir: engine.agentDir,
        files: inv.files.map((f) => f.path),
        name: `subagents-${id}-${runId}`,
        settings: engine.settings,
        ownConfig: foreign?.ownConfig,
        network: childNetwork(task, childModel),
        tree: tree ? treeOf(tree) : undefined,
        // Only a confined child reads it (runners/child-files.ts): the others are spared reading the settings again.
        piAuth: foreign || !confined(task.where) ? undefined : childAuthFor(task, childModel),
      });
      if (typeof placed === "string") throw new TaskError(placed, "RUNNER_FAILED");
      const ran = await runChild(host, engine.clock, runSpec(task, plan, { inv, foreign, placed, stdin, spentBefore }));
      notePlacement(task, placed);
      return ran;
    } finally {
      if (typeof placed === "object") await placed.cleanup?.();
      for (const f of inv.files) host.remove(f.path);
      if (runTmp) host.remove(runTmp);
    }
  };
}

/** A task's own tree, as the runner must show it (runners/types.ts `tree`): its layer (and the git folders layered
 *  with it), or its copy — an isolated task's at the copy's own path, a sandboxed task's at its folder's — and the
 *  repository's objects the copy borrows. */
function treeOf(wt: Worktree) {
  const m = wt.made;
  if (m?.layer) return { writable: [m.layer.root, ...m.layer.gitDirs].map((path) => ({ path })), readable: [] };
  if (m?.copy)
    return { writable: [{ path: m.inPlace ? wt.path : m.copy, from: m.copy }], readable: m.objects ? [m.objects] : [] };
  return undefined;
}

/** The run's own TMPDIR: for a child on this machine outside the sandbox (the others have a /tmp of their own). */
function runTempDir(task: TaskContext): string | null {
  if (!task.where.runner.local || task.where.sandbox) return null;
  return `${task.engine.host.privateTempDir()}/tmp-${task.id}-${task.runId}`;
}

/** Our pi child's command: its argv, env and the files it reads (system prompt, MCP config). */
function piInvocation(task: TaskContext, plan: LaunchPlan, model: string | null | undefined): Invocation {
  const { engine, profile, id, runId, sessionFile, skills, wiring } = task;
  const { host, settings } = engine;
  return buildInvocation({
    piCommand: engine.piCommand,
    childExtension: engine.childExtension,
    profile,
    transport: task.transport,
    finalize: plan.finalize,
    sessionFile,
    model,
    depth: engine.depth + 1,
    maxDepth: settings.maxDepth,
    parentPid: host.pid,
    parentTools: engine.call.parentTools,
    promptFile: `${host.privateTempDir()}/${id}-${runId}.md`,
    skillPaths: skills.skillPaths,
    appendPrompt: appendPrompt(task),
    projectTrust: task.trust,
    baseEnv: { ...host.env, ...engine.piEnv },
    piVersion: engine.piVersion,
    defaultModel: expectedDefaultModel(engine, task.cwd, task.trust),
    canAsk: settings.ask !== "deny" && !!wiring.ask,
    team: !!wiring.team,
    forkPrompt: plan.forkPrompt,
    ...plan.mcp,
  });
}

const appendPrompt = (task: TaskContext) =>
  [task.skills.appendPrompt, task.memory].filter(Boolean).join("\n\n") || undefined;

type Attempt = {
  inv: Invocation;
  foreign: ForeignInvocation | null;
  placed: Placed;
  stdin: string;
  spentBefore?: Usage;
};

/** What the process runner gets for one attempt: the placed command, the task's limits and what the call wired in. */
function runSpec(task: TaskContext, plan: LaunchPlan, a: Attempt): RunSpec {
  const { engine, input, id, sessionFile, prompt, wiring } = task;
  const { settings } = engine;
  const { inv, foreign, placed, stdin } = a;
  const teamNote = inv.env.PI_SUBAGENT_TEAM === "1" ? wiring.team?.note : undefined;
  const firstNotes = [inv.taskNote, teamNote].filter(Boolean).join("\n\n");
  // An overlay view exists only in the namespace its processes enter (launch/worktree-view.ts): the child, its
  // sandbox and its gate start inside it. Only a local child gets one (task-isolate.ts).
  const enter = (task.iso?.worktree ?? task.inPlace?.worktree)?.view?.enter ?? [];
  return {
    argv: [...enter, ...placed.argv],
    env: placed.env,
    ...(placed.fd5 !== undefined ? { fd5: placed.fd5 } : {}),
    sessionFile,
    cwd: task.cwd,
    // A cache-true fork's own instructions follow its task (its system prompt is the parent's).
    // The team note (who the siblings are) follows the task too: each child's differs, and a kept child's
    // system prompt must stay the same for every task it runs.
    prompt: foreign ? foreign.stdin : firstNotes && stdin === prompt ? `${stdin}\n\n${firstNotes}` : stdin,
    transport: foreign ? "json" : task.transport,
    parser: foreign?.parser,
    // Some CLIs leave their workers running when only the main process is told to stop.
    termTree: !!foreign,
    finalize: plan.finalize,
    timeoutSec: input.timeoutSec,
    extendDebounceSec: settings.extendTimeoutDebounce,
    maxRuntimeSec: settings.maxRuntime,
    loopingToolCount: settings.loopingToolCount,
    budget: input.budget,
    callSpend: wiring.callSpend && { spend: wiring.callSpend, key: id },
    spentBefore: a.spentBefore,
    rateGate: plan.rateGate,
    limits: engine.limits,
    settles: engine.piSettles,
    signal: wiring.signal,
    onEvent: (state, ev) => {
      wiring.onEvent?.(state, ev);
      plan.checkpoints.update(state);
    },
    onControl: wiring.onControl,
    team: wiring.team,
    gate: input.gate,
    reuse:
      reusable(task, !!foreign, placed) && !plan.forkPrompt && !enter.length
        ? { pool: wiring.pool!, files: inv.files.map((f) => f.path) }
        : undefined,
    ask: {
      asker: wiring.ask,
      mode: settings.ask,
      timeoutSec: settings.askTimeout,
      sessionId: id,
      label: input.name ?? task.agent,
    },
    sessionId: id,
    keepProcesses: input.keepProcesses,
  };
}

/**
 * Whether this child may run in a kept child of its call (process/pool.ts): pi reporting agent_settled (≥ 0.80.4)
 * through our child extension on fd 3, started here as it is (no sandbox, container or job wrapping it).
 */
function reusable(task: TaskContext, foreign: boolean, placed: Placed): boolean {
  const { engine, wiring, where } = task;
  if (!wiring.pool || !engine.settings.reuseChildren || foreign || task.input.keepProcesses) return false;
  if (!engine.piSettles || task.transport !== "compact") return false;
  return where.runner.local && !where.sandbox && rpcArgv(placed.argv) !== null;
}

/** The child's command when another harness's CLI runs it (runtimes/), or why it cannot start. */
function foreignChild(task: TaskContext, model: string | null | undefined): ForeignInvocation | string {
  const { engine, profile, id, runId } = task;
  return foreignInvocation({
    host: engine.host,
    runtime: task.input.runtime as ForeignRuntimeName,
    profile,
    prompt: task.prompt,
    appendPrompt: appendPrompt(task),
    model: model ?? undefined,
    tmpDir: `${engine.host.privateTempDir()}/${id}-${runId}`,
    depth: engine.depth + 1,
    maxDepth: engine.settings.maxDepth,
    local: task.where.runner.local,
  });
}
