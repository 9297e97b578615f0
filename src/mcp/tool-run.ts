// `delegate_to_subagents` and `subagent` over MCP (docs/mcp.md): the same parameters, checks, refusals and
// results as inside pi (docs/pi-extension.md), with the children's usage and cost in the text too (an MCP host
// counts only its own model's spend). Each call first learns the client's roots (when it has any), then runs its
// tasks: in rounds (calls.ts) until they end, as a task the client follows (tasks.ts) when it declares the Tasks
// extension, or in the background when asked. A retry of a round already served is answered by its call.
import { fanoutRefusal } from "../core/call/confirm-fanout.ts";
import { projectProfileRefusals } from "../core/call/project-consent.ts";
import type { CallFront } from "../core/call/prepare.ts";
import { subagentParams } from "../core/call/subagent-call.ts";
import { delegateFlow } from "../core/call/tools/delegate.ts";
import type { ToolFront, ToolRun } from "../core/call/tools/front.ts";
import { subagentFlow } from "../core/call/tools/subagent.ts";
import type { CapGuard } from "../core/run/cap-guard.ts";
import type { Engine } from "../core/run/engine.ts";
import { parseTraceparent } from "../core/trace/context.ts";
import { startRun } from "./call-adapter.ts";
import type { EndedCall, McpCalls, RoundState } from "./calls.ts";
import { callCwd, clientRoots } from "./client.ts";
import type { ToolContext, ToolOutcome } from "./protocol/session.ts";
import { inputRequired } from "./protocol/wire.ts";
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

/** A retry of a round of a call that ended (or one started in the background, or as a task): its answer again. */
function answered(d: RunDeps, kind: TaskKind, ctx: ToolContext, ended: EndedCall): ToolOutcome {
  if (ended.task && ctx.caps.tasks) return { resultType: "task", task: d.tasks.get(ended.task) };
  const outcomes = recordedOutcomes(d.services.store, ended.sessions);
  if (ended.background) return STARTED[kind](outcomes);
  return RESULTS[kind](outcomes);
}

/** The shared shape of both tools: continue a call, or learn the roots and run the tool's flow (core/call/tools/)
 *  with this server as its front — nobody to ask, its caps and owner — starting the call in the background, as a
 *  task the client follows, or in rounds. */
async function serve(
  d: RunDeps,
  ctx: ToolContext,
  kind: TaskKind,
  flow: (front: ToolFront<ToolOutcome>) => Promise<ToolRun<ToolOutcome, unknown>>,
): Promise<ToolOutcome> {
  const state: RoundState = d.calls.stateOf(ctx);
  const again = d.calls.resumed(state);
  if (again) return d.calls.attend(again, ctx);
  const ended = d.calls.endedCall(state);
  if (ended) return answered(d, kind, ctx, ended);
  const id = state.call ?? d.calls.newId();
  const roots = clientRoots(ctx, state.roots === true);
  if ("ask" in roots) return inputRequired(roots.ask, d.calls.codec.mint({ call: id, roots: true }));
  const cwd = callCwd(d.services.cwd, roots.roots);
  const parent = parseTraceparent(ctx.trace?.traceparent, ctx.trace?.tracestate);
  let made: Engine | undefined;
  const run = await flow({
    cwd,
    roots: roots.roots,
    // Made once per call: it reads the folder's settings and agent files and resolves which pi the children run.
    engine: () => (made ??= d.services.engineFor(cwd)),
    prepare: (engine) => front(engine, d.caps),
    consent: { cwd, hasUI: false },
    start: async (engine, prepared, background) => {
      const o = { caps: d.caps, owner: await d.services.owner(), ...(parent ? { trace: { parent } } : {}) };
      if (background) {
        const started = startRun(engine, prepared, { ...o, waitForAnswers: true });
        if ("refusal" in started) return started;
        d.calls.track(started, { id, background: true });
        return { running: STARTED[kind](prepared.tasks) };
      }
      if (ctx.caps.tasks) {
        const { task, asker } = d.tasks.open(
          kind,
          prepared.tasks.map((t) => t.sessionId),
        );
        const started = startRun(engine, prepared, { ...o, ask: ctx.caps.elicitation ? asker : undefined });
        if ("refusal" in started) return started;
        d.calls.track(started, { id, task: task.id });
        try {
          return { running: { resultType: "task", task: d.tasks.start(task, started) } };
        } catch (err) {
          // Not recorded as a task: nobody could follow it, so nothing of it runs.
          started.abort();
          await started.outcomes;
          return {
            refusal: { code: "SUBAGENT_FAILED", message: `Cannot start an MCP task: ${(err as Error).message}` },
          };
        }
      }
      const { call, asker } = d.calls.open(RESULTS[kind], engine.settings.askTimeout * 1000, id);
      const started = startRun(engine, prepared, { ...o, ask: ctx.caps.elicitation ? asker : undefined });
      if ("refusal" in started) {
        d.calls.forget(call);
        return started;
      }
      call.run = started;
      d.calls.track(started);
      return { running: await d.calls.attend(call, ctx) };
    },
  });
  return "refusal" in run ? refused(run.refusal) : run.running;
}

export const delegateHandler = (d: RunDeps, raw: unknown, ctx: ToolContext): Promise<ToolOutcome> =>
  serve(d, ctx, "delegate", (front) => delegateFlow(raw, front));

export async function subagentHandler(d: RunDeps, raw: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  // A call that is no call is refused before the client is asked anything (its roots).
  const p = subagentParams(raw);
  if ("code" in p) return refused(p);
  return serve(d, ctx, "subagent", (front) => subagentFlow(raw, front));
}
