// `delegate_to_subagents` and `subagent` over MCP (docs/mcp.md): the same parameters, checks, refusals and
// results as inside pi (docs/pi-extension.md), with the children's usage and cost in the text too (an MCP host
// counts only its own model's spend). Each call first learns the client's roots (when it has any), then runs its
// tasks in rounds (calls.ts) until they end.
import { fanoutRefusal } from "../core/call/confirm-fanout.ts";
import { projectProfileRefusals } from "../core/call/project-consent.ts";
import { prepareCall, type CallFront, type PreparedCall } from "../core/call/prepare.ts";
import { delegateToolRequest, type CallRequest, type Refusal } from "../core/call/request.ts";
import { childrenResultFields, refusedCall, startedLine, startedTasks } from "../core/call/results.ts";
import { subagentCall, subagentConsentRefusal, subagentParams } from "../core/call/subagent-call.ts";
import { withWorkflow } from "../core/call/workflow.ts";
import { parseTraceparent } from "../core/trace/context.ts";
import { InputError, parseDelegateParams, type DelegateParams } from "../core/delegate-input.ts";
import type { CapGuard } from "../core/run/cap-guard.ts";
import { delegateResultText } from "../core/run/outcome-text.ts";
import type { Engine } from "../core/run/engine.ts";
import type { PreparedTask, TaskOutcome } from "../core/run/task-types.ts";
import { addUsage, emptyUsage } from "../core/types.ts";
import { usd } from "../core/session-caps.ts";
import { subagentResult } from "../ui/subagent-result.ts";
import { startRun } from "./call-adapter.ts";
import type { McpCalls } from "./calls.ts";
import { callCwd, clientRoots } from "./client.ts";
import type { ToolContext, ToolOutcome } from "./protocol/session.ts";
import type { ToolResult } from "./protocol/wire.ts";
import type { McpServices } from "./services.ts";

export type RunDeps = {
  services: McpServices;
  calls: McpCalls;
  caps: CapGuard;
};

const FORK_NEEDS = 'context "fork" needs a parent conversation to copy, which an MCP client does not give';

/** A refusal as a tool error with the spec's structured shape (`tasks: []`, `error {code, message}`): pi's, less
 * pi's own `details`. */
export function refused(r: Refusal): ToolResult {
  const { details: _pi, ...result } = refusedCall(r);
  return result;
}

/** `Usage: 2 sub-agents · 240 input, 60 output tokens · $0.0012`. */
function usageLine(outcomes: TaskOutcome[]): string {
  const u = outcomes.reduce((sum, o) => addUsage(sum, o.result.usage ?? emptyUsage()), emptyUsage());
  return `Usage: ${outcomes.length} sub-agent${outcomes.length === 1 ? "" : "s"} · ${u.input} input, ${u.output} output tokens · ${usd(u.cost)}`;
}

/** What pi's tools return beside their text, less pi's own usage field: the structured result, and `isError` when
 * no task completed. */
function structured(outcomes: TaskOutcome[]) {
  const { structuredContent, isError } = childrenResultFields(outcomes);
  return { structuredContent, ...(isError ? { isError } : {}) };
}

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

/** The shared shape of both tools: continue a call, or learn the roots, plan and prepare one, then run it. */
async function serve(
  d: RunDeps,
  ctx: ToolContext,
  plan: Plan,
  finish: (outcomes: TaskOutcome[], tasks: readonly PreparedTask[]) => ToolResult,
  background: (tasks: readonly PreparedTask[]) => ToolResult,
): Promise<ToolOutcome> {
  const again = d.calls.resumed(ctx);
  if (again) return d.calls.attend(again, ctx);
  const roots = clientRoots(ctx);
  if ("ask" in roots) return roots.ask;
  const planned = await plan(callCwd(d.services.cwd, roots.roots), roots.roots);
  if (!isStarted(planned)) return planned;
  const { call: prepared, engine } = planned;
  const parent = parseTraceparent(ctx.trace?.traceparent, ctx.trace?.tracestate);
  const run = { caps: d.caps, owner: await d.services.owner(), ...(parent ? { trace: { parent } } : {}) };
  if (planned.background) {
    const started = startRun(engine, prepared, { ...run, waitForAnswers: true });
    if ("refusal" in started) return refused(started.refusal);
    d.calls.track(started);
    return background(prepared.tasks);
  }
  const { call, asker } = d.calls.open(
    (outcomes) => finish(outcomes, prepared.tasks),
    engine.settings.askTimeout * 1000,
  );
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
  return serve(
    d,
    ctx,
    plan,
    (outcomes) => ({
      content: [{ type: "text", text: `${delegateResultText(outcomes)}\n\n${usageLine(outcomes)}` }],
      ...structured(outcomes),
    }),
    (tasks) => {
      const lines = tasks.map(startedLine);
      return {
        content: [{ type: "text", text: `${lines.join("\n")}\n${BACKGROUND_HINT}` }],
        structuredContent: startedTasks(tasks),
      };
    },
  );
}

const BACKGROUND_HINT =
  "get_subagent_output returns an output by session id (wait: true blocks until it ends); they stop when this MCP server does.";

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
  return serve(
    d,
    ctx,
    plan,
    ([o], [input]) => {
      const r = subagentResult(o, p.task, input.sessionId.slice(0, 8));
      const text = r.content[0].text;
      return {
        content: [{ type: "text", text: `${text}\n\n${usageLine([o])}` }],
        ...structured([o]),
      };
    },
    ([input]) => ({
      content: [
        {
          type: "text",
          text: `**Status:** RUNNING\n**Session ID:** \`${input.sessionId}\`\n\n---\n\nStarted in the background. ${BACKGROUND_HINT}`,
        },
      ],
      structuredContent: startedTasks([{ name: p.agent, sessionId: input.sessionId, profile: p.agent }]),
    }),
  );
}
