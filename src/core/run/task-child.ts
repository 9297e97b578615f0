// Stage "run": the child itself — its invocation, the run, and the profile's fallback models when a model fails.
// Whatever happens, the stage ends with a result on the task (a thrown error becomes a failed result).
import { mergeBudgets } from "../budget.ts";
import { credentialsError } from "../credentials.ts";
import type { RunResult } from "../types.ts";
import { runCheckpoints } from "./process/checkpoint.ts";
import { afterFallback, didWork, FALLBACK_CONTINUE_TEXT, fallbackModels, modelFailed } from "./fallback.ts";
import { buildInvocation, type Invocation } from "./launch/invocation.ts";
import { cacheTrueFork } from "./fork.ts";
import { rateGateFor } from "./process/rate-gate.ts";
import { runChild } from "./process/runner.ts";
import { chooseModel, cwdSlug, effectiveTimeout, failedResult, TaskError } from "./task-shared.ts";
import type { TaskContext } from "./task-context.ts";
import { childMcp } from "./mcp-select.ts";
import { expectedDefaultModel } from "./default-model.ts";
import { composeEnv, resolveGate } from "./process/gate.ts";
import { wrapForRunner } from "./runners/choose.ts";
import type { Placed } from "./runners/types.ts";
import { foreignInvocation, type ForeignInvocation } from "./runtimes/invoke.ts";
import type { ForeignRuntimeName } from "./runtimes/types.ts";
import { rpcArgv } from "./process/pool.ts";
import { guardWarnings } from "./runners/guard-report.ts";
import { refusedWarning } from "./runners/network.ts";
import { modelEndpoints, providerOf } from "./model-endpoint.ts";
import { readUserModels } from "../profiles/model-resolve.ts";
import { foreignEndpoints } from "./runtimes/providers.ts";

export async function runTaskChild(task: TaskContext): Promise<void> {
  const { engine, input, hooks, profile, id, runId, sessionFile, prompt, skills, iso, warnings, model } = task;
  const { host, store, settings } = engine;
  const childCwd = task.cwd;
  // A call's gate comes from the scheduler; a lone task (`run`, `subagent`) gets its own.
  const rateGate = hooks.rateGate ?? rateGateFor(1, engine.clock, settings.rateLimitWait);
  const checkpoints = runCheckpoints(store, engine.clock, runId);
  let result: RunResult;
  // pi 1.x MCP servers for this child (the agent's or settings' `mcp`, minus servers the owner found dead).
  const mcp = await childMcp(engine, profile, childCwd);
  const forkPrompt =
    task.runtime.name === "pi"
      ? cacheTrueFork({
          fork: input.fork,
          resuming: !!task.resumeOf,
          cwd: childCwd,
          parent: engine.call.parentPrompt,
          profile,
        })
      : undefined;
  // A cache-true fork answers in plain text: the finalize tool, which only the child has, would end the prefix it
  // shares with its parent at the tool list (docs/BENCHMARKS.md measures it). A structured result still needs it.
  const finalize =
    forkPrompt && task.finalize === "required" && !(input.outputSchema ?? profile?.outputSchema)
      ? "optional"
      : task.finalize;
  const attempt = async (
    childModel: string | null | undefined,
    stdin = prompt,
    spentBefore?: RunResult["usage"],
  ): Promise<RunResult> => {
    host.mkdirp(`${engine.agentDir}/subagent-sessions/${cwdSlug(input.cwd)}`);
    const foreign = task.runtime.name === "pi" ? null : foreignChild(task, childModel);
    if (typeof foreign === "string") return failedResult(foreign, "RUNTIME_MISSING");
    const inv: Invocation =
      foreign ??
      buildInvocation({
        piCommand: engine.piCommand,
        childExtension: engine.childExtension,
        profile,
        transport: task.transport,
        finalize,
        sessionFile,
        model: childModel,
        depth: engine.depth + 1,
        maxDepth: settings.maxDepth,
        parentPid: host.pid,
        parentTools: engine.call.parentTools,
        promptFile: `${host.privateTempDir()}/${id}-${runId}.md`,
        skillPaths: skills.skillPaths,
        appendPrompt: [skills.appendPrompt, task.memory].filter(Boolean).join("\n\n") || undefined,
        projectTrust: task.trust,
        baseEnv: { ...host.env, ...engine.piEnv },
        piVersion: engine.piVersion,
        defaultModel: expectedDefaultModel(engine, childCwd),
        canAsk: settings.ask !== "deny" && !!hooks.ask,
        team: !!hooks.team,
        forkPrompt,
        ...mcp,
      });
    for (const w of inv.warnings ?? []) if (!warnings.includes(w)) warnings.push(w);
    const teamNote = inv.env.PI_SUBAGENT_TEAM === "1" ? hooks.team?.note : undefined;
    const firstNotes = [inv.taskNote, teamNote].filter(Boolean).join("\n\n");
    if (iso) iso.scrubEnv(inv.env);
    Object.assign(inv.env, composeEnv(input, profile));
    for (const f of inv.files) host.writeFile(f.path, f.content, 0o600);
    let placed: Placed | string | undefined;
    try {
      if (!host.stat(childCwd)?.isDirectory)
        throw new TaskError(`Working directory does not exist: ${childCwd}`, "INVALID_INPUT");
      placed = await wrapForRunner(task.where, {
        host,
        argv: inv.argv,
        env: inv.env,
        cwd: childCwd,
        sessionFile,
        agentDir: engine.agentDir,
        files: inv.files.map((f) => f.path),
        name: `subagents-${id}-${runId}`,
        settings,
        ownConfig: foreign?.ownConfig,
        network: childNetwork(task, childModel, warnings),
        piAuth: foreign ? undefined : { provider: childProvider(task, childModel) },
      });
      if (typeof placed === "string") throw new TaskError(placed, "RUNNER_FAILED");
      const ran = await runChild(host, engine.clock, {
        argv: placed.argv,
        env: placed.env,
        sessionFile,
        cwd: childCwd,
        // A cache-true fork's own instructions follow its task (its system prompt is the parent's).
        // The team note (who the siblings are) follows the task too: each child's differs, and a kept child's
        // system prompt must stay the same for every task it runs.
        prompt: foreign ? foreign.stdin : firstNotes && stdin === prompt ? `${stdin}\n\n${firstNotes}` : stdin,
        transport: foreign ? "json" : task.transport,
        parser: foreign?.parser,
        // Some CLIs leave their workers running when only the main process is told to stop.
        termTree: !!foreign,
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
        team: hooks.team,
        gate: resolveGate(input, profile),
        reuse:
          reusable(task, !!foreign, placed) && !forkPrompt
            ? { pool: hooks.pool!, files: inv.files.map((f) => f.path) }
            : undefined,
        ask: {
          asker: hooks.ask,
          mode: settings.ask,
          timeoutSec: settings.askTimeout,
          sessionId: id,
          label: input.name ?? task.agent,
        },
        sessionId: id,
        keepProcesses: keepsProcesses(task),
      });
      // Writes the sandbox refused to protected paths, and protected paths the child created: the person sees them.
      for (const w of guardWarnings(host, placed.guard, ran.messages)) if (!warnings.includes(w)) warnings.push(w);
      // Connections the closed network's proxy refused: the person sees what the child tried to reach.
      const refused = refusedWarning(placed.netRefused?.());
      if (refused) warnings.push(refused);
      for (const w of placed.warnings?.() ?? []) if (!warnings.includes(w)) warnings.push(w);
      return ran;
    } finally {
      if (typeof placed === "object") await placed.cleanup?.();
      for (const f of inv.files) host.remove(f.path);
    }
  };
  try {
    // Another harness's CLI takes the model as written: pi's aliases and model list are not its.
    result = await attempt(task.runtime.name === "pi" ? model.model : (input.model ?? foreignModel(profile?.model)));
    // With no --model, pi's default model was asked for: the child's pi may not know it (src/child-extension/model-guard.ts).
    let refused = refusedModel(result, model.model ?? expectedDefaultModel(engine, childCwd) ?? "pi's default model");
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
    if (refused && model.model && !hooks.signal?.aborted) {
      // pi could not use the model and exited before any model call: run on the default model instead, and say so.
      warnings.unshift(
        `${refused}: running on ${engine.caches.userModels?.defaultModel ?? "pi's default model"} instead (map it with subagents.modelAliases)`,
      );
      result = await attempt(null);
    }
  } catch (err) {
    result =
      err instanceof TaskError
        ? failedResult(err.message, err.code)
        : failedResult(`Sub-agent failed: ${(err as Error).message}`, "SUBAGENT_FAILED");
  } finally {
    checkpoints.stop();
  }
  const noCredentials =
    result.status === "error"
      ? credentialsError(result.error, result.model ?? model.model ?? expectedDefaultModel(engine, childCwd))
      : null;
  task.result = noCredentials ? { ...result, error: noCredentials } : result;
}

/**
 * Whether this child may run in a kept child of its call (child/pool.ts): pi reporting agent_settled (≥ 0.80.4)
 * through our child extension on fd 3, started here as it is (no sandbox, container or job wrapping it).
 */
function reusable(task: TaskContext, foreign: boolean, placed: Placed): boolean {
  const { engine, hooks, where } = task;
  if (!hooks.pool || !engine.settings.reuseChildren || foreign || keepsProcesses(task)) return false;
  if (!engine.piSettles || task.transport !== "compact") return false;
  return where.runner.name === "local" && !where.sandbox && rpcArgv(placed.argv) !== null;
}

/** The task (or its agent) keeps what its commands leave running; a kept child never does (its next task would see them). */
const keepsProcesses = (task: TaskContext) => task.input.keepProcesses ?? task.profile?.keepProcesses ?? false;

/**
 * Why pi refused the model at start-up, when that is why the run failed (no model call was made): it did not
 * know the name, or it matched the name to a provider without credentials. Else null.
 */
function refusedModel(r: RunResult, model: string): string | null {
  if (r.status !== "error" || r.usage.turns > 0) return null;
  if (/Model "[^"]+" not found/.test(r.error ?? "")) return `model "${model}" is not known to pi here`;
  const provider = /No API key found for ([\w.-]*[\w-])/.exec(r.error ?? "")?.[1];
  return provider ? `model "${model}" is matched by pi to provider "${provider}", which has no credentials here` : null;
}

const foreignModel = (m: string | undefined) => (m && m !== "inherit" ? m : undefined);

/** The child's command when another harness's CLI runs it (runtimes/), or why it cannot start. */
function foreignChild(task: TaskContext, model: string | null | undefined): ForeignInvocation | string {
  const { engine, profile, id, runId } = task;
  return foreignInvocation({
    host: engine.host,
    runtime: task.runtime.name as ForeignRuntimeName,
    profile,
    prompt: task.prompt,
    appendPrompt: [task.skills.appendPrompt, task.memory].filter(Boolean).join("\n\n") || undefined,
    model: model ?? undefined,
    tmpDir: `${engine.host.privateTempDir()}/${id}-${runId}`,
    depth: engine.depth + 1,
    maxDepth: engine.settings.maxDepth,
    local: task.where.runner.name === "local",
  });
}

/** The provider of the model a pi child runs (its credentials copy holds that provider's only), when known here. */
function childProvider(task: TaskContext, childModel: string | null | undefined): string | undefined {
  const { engine } = task;
  const model = childModel ?? expectedDefaultModel(engine, task.cwd);
  if (!model) return undefined;
  engine.caches.userModels ??= readUserModels(engine.host, engine.agentDir);
  return providerOf(model, engine.caches.userModels);
}

/**
 * What a sandboxed (or container) child's proxy lets through when its network is closed (runners/network.ts): its
 * model's endpoints, and with "model" the settings' allow list. Unset when the network stays open.
 */
function childNetwork(
  task: TaskContext,
  childModel: string | null | undefined,
  warnings: string[],
): { allow: string[]; forwarder?: string[] } | undefined {
  const { engine, where } = task;
  const mode = engine.settings.sandboxNetwork;
  if (mode === "all" || !(where.sandbox || where.runner.name === "docker")) return undefined;
  engine.caches.userModels ??= readUserModels(engine.host, engine.agentDir);
  const foreign =
    task.runtime.name === "pi"
      ? null
      : foreignEndpoints(task.runtime.name as ForeignRuntimeName, {
          ...engine.host.env,
          ...composeEnv(task.input, task.profile),
        });
  const model = foreign
    ? { allow: foreign }
    : modelEndpoints(engine.host, engine.agentDir, childModel, engine.caches.userModels);
  if (model.warning && !warnings.includes(model.warning)) warnings.push(model.warning);
  const allow = [...model.allow, ...(mode === "model" ? engine.settings.sandboxAllowHosts : [])];
  const forwarder = engine.netForwarder ?? (engine.piEnv.SUBAGENTS_ROLE === "pi" ? engine.piCommand : undefined);
  return { allow, forwarder };
}
