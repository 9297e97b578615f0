// `delegate_to_subagents` and `subagent` over MCP (docs/mcp.md): the same parameters, checks, refusals and
// results as inside pi (docs/pi-extension.md), with the children's usage and cost in the text too (an MCP host
// counts only its own model's spend). Each call first learns the client's roots (when it has any), then runs its
// tasks: in rounds (calls.ts) until they end, as a task the client follows (tasks.ts) when it declares the Tasks
// extension, or in the background when asked. A retry of a round already served is answered by its call.
import { fanoutRefusal } from "../core/call/confirm-fanout.ts";
import { projectProfileRefusals } from "../core/call/project-consent.ts";
import { prepareCall, type CallFront, type PreparedCall } from "../core/call/prepare.ts";
import { delegateToolRequest, type CallRequest } from "../core/call/request.ts";
import { subagentCall, subagentConsentRefusal, subagentParams } from "../core/call/subagent-call.ts";
import { withWorkflow } from "../core/call/workflow.ts";
import { InputError, parseDelegateParams, type DelegateParams } from "../core/delegate-input.ts";
import type { CapGuard } from "../core/run/cap-guard.ts";
import type { Engine } from "../core/run/engine.ts";
import { parseTraceparent } from "../core/trace/context.ts";
import { startRun } from "./call-adapter.ts";
import type { EndedCall, McpCalls, RoundState } from "./calls.ts";
import { callCwd, clientRoots } from "./client.ts";
import type { ToolContext, ToolOutcome } from "./protocol/session.ts";
import { inputRequired, type ToolResult } from "./protocol/wire.ts";
import { recordedOutcomes, refused, RESULTS, STARTED } from "./results.ts";
import type { McpServices } from "./services.ts";
import type { TaskKind } from "./task-index.ts";
import type { McpTasks } from "./tasks.ts";

export type RunDeps = {
  services: McpServices;
  calls: McpCalls;
  tasks: McpTasks;
  caps: CapGuard;
};

const FORK_NEEDS = 'context "fork" needs a parent conversation to copy, which an MCP client does not give';

function front(engine: Engine, caps: CapGuard): CallFront {
  return {
    forkNeeds: FORK_NEEDS,
    caps,
    // No person to ask here: subagents.projectAgents decides alone, as in headless pi.
    refusedProfiles: (names) => projectProfileRefusals(engine.settings, engine.profiles, names, new Set()),
    confirmFanout: (n) => fanoutRefusal({ hasUI: false }, engine.settings, n, process.env, "start subagents mcp"),
  };
}

type Started = { call: PreparedCall; engine: Engine; background?: boolean };
const isStarted = (x: Started | ToolResult): x is Started => (x as Started).call !== undefined;
type Plan = (cwd: string, roots: string[] | null) => Promise<Started | ToolResult>;

/** A retry of a round of a call that ended (or one started in the background, or as a task): its answer again. */
function answered(d: RunDeps, kind: TaskKind, ctx: ToolContext, ended: EndedCall): ToolOutcome {
  if (ended.task && ctx.caps.tasks) return { resultType: "task", task: d.tasks.get(ended.task) };
  const outcomes = recordedOutcomes(d.services.store, ended.sessions);
  if (ended.background) return STARTED[kind](outcomes);
  return RESULTS[kind](outcomes);
}

/** The shared shape of both tools: continue a call, or learn the roots, plan and prepare one, then run it. */
async function serve(d: RunDeps, ctx: ToolContext, kind: TaskKind, plan: Plan): Promise<ToolOutcome> {
  const state: RoundState = d.calls.stateOf(ctx);
  const again = d.calls.resumed(state);
  if (again) return d.calls.attend(again, ctx);
  const ended = d.calls.endedCall(state);
  if (ended) return answered(d, kind, ctx, ended);
  const id = state.call ?? d.calls.newId();
  const roots = clientRoots(ctx, state.roots === true);
  if ("ask" in roots) return inputRequired(roots.ask, d.calls.codec.mint({ call: id, roots: true }));
  const planned = await plan(callCwd(d.services.cwd, roots.roots), roots.roots);
  if (!isStarted(planned)) return planned;
  const { call: prepared, engine } = planned;
  const parent = parseTraceparent(ctx.trace?.traceparent, ctx.trace?.tracestate);
  const run = { caps: d.caps, owner: await d.services.owner(), ...(parent ? { trace: { parent } } : {}) };
  if (planned.background) {
    const started = startRun(engine, prepared, { ...run, waitForAnswers: true });
    if ("refusal" in started) return refused(started.refusal);
    d.calls.track(started, { id, background: true });
    return STARTED[kind](prepared.tasks);
  }
  if (ctx.caps.tasks) {
    const { task, asker } = d.tasks.open(
      kind,
      prepared.tasks.map((t) => t.sessionId),
    );
    const started = startRun(engine, prepared, { ...run, ask: ctx.caps.elicitation ? asker : undefined });
    if ("refusal" in started) return refused(started.refusal);
    d.calls.track(started, { id, task: task.id });
    try {
      return { resultType: "task", task: d.tasks.start(task, started) };
    } catch (err) {
      // Not recorded as a task: nobody could follow it, so nothing of it runs.
      started.abort();
      await started.outcomes;
      return refused({ code: "SUBAGENT_FAILED", message: `Cannot start an MCP task: ${(err as Error).message}` });
    }
  }
  const { call, asker } = d.calls.open(RESULTS[kind], engine.settings.askTimeout * 1000, id);
  const started = startRun(engine, prepared, { ...run, ask: ctx.caps.elicitation ? asker : undefined });
  if ("refusal" in started) {
    d.calls.forget(call);
    return refused(started.refusal);
  }
  call.run = started;
  d.calls.track(started);
  return d.calls.attend(call, ctx);
}

/** The call's engine (made once per call: it reads the folder's settings and agent files and resolves which pi the
 * children run), or why none can run them as a result. */
function engineOf(make: () => Engine): Engine | ToolResult {
  try {
    return make();
  } catch (err) {
    return refused({ code: "SUBAGENT_FAILED", message: `Cannot start a sub-agent: ${(err as Error).message}` });
  }
}
const isResult = (x: Engine | ToolResult): x is ToolResult => "content" in x;

/** The request prepared on the call's engine, or the refusal as a result. */
async function prepared(
  d: RunDeps,
  engine: Engine,
  roots: string[] | null,
  request: CallRequest,
): Promise<Started | ToolResult> {
  // The roots are checked with every task's folder, by real paths, where every front's folders are (core/call).
  const p = await prepareCall(engine, roots ? { ...request, roots } : request, front(engine, d.caps));
  return "refusal" in p ? refused(p.refusal) : { call: p.call, engine, background: request.background };
}

export async function delegateHandler(d: RunDeps, raw: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  let params: DelegateParams;
  const plan: Plan = async (cwd, roots) => {
    // A saved workflow is read with the engine the call then runs on.
    let made: Engine | undefined;
    const make = () => (made ??= d.services.engineFor(cwd));
    try {
      const consent = { cwd, hasUI: false };
      params = parseDelegateParams(await withWorkflow(raw, consent, async () => make()));
    } catch (err) {
      const message =
        err instanceof InputError ? `Invalid delegate_to_subagents call: ${err.message}` : (err as Error).message;
      return refused({ code: "INVALID_INPUT", message });
    }
    const engine = engineOf(make);
    return isResult(engine) ? engine : prepared(d, engine, roots, delegateToolRequest(params, cwd));
  };
  return serve(d, ctx, "delegate", plan);
}

export async function subagentHandler(d: RunDeps, raw: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  const p = subagentParams(raw);
  if ("code" in p) return refused(p);
  const plan: Plan = async (cwd, roots) => {
    const engine = engineOf(() => d.services.engineFor(cwd));
    if (isResult(engine)) return engine;
    const checked = subagentCall(engine, engine.profiles, p, cwd);
    if ("refusal" in checked) return refused(checked.refusal);
    const ready = await prepared(d, engine, roots, checked.request);
    if (!isStarted(ready)) return ready;
    const consent = subagentConsentRefusal(ready.call);
    return consent ? refused(consent) : ready;
  };
  return serve(d, ctx, "subagent", plan);
}
