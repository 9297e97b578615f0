// delegate_to_subagents (docs/pi-extension.md): 1–16 tasks in parallel, live windows through throttled onUpdate, and a
// result that carries each task's status line AND its output (bounded; get_subagent_output has the rest).
import { parseDelegateParams, type DelegateParams } from "../core/delegate-input.ts";
import { InputError } from "../core/task-fields.ts";
import { realClock } from "../core/host.ts";
import { TOOL_TEXTS } from "../core/call/tool-texts.ts";
import type { TaskOutcome } from "../core/run/task-types.ts";
import { prepareCall } from "../core/call/prepare.ts";
import { delegateToolRequest } from "../core/call/request.ts";
import { delegateResultText } from "../core/run/outcome-text.ts";
import { isolationDetails } from "../core/run/launch/isolation.ts";
import { callWindows } from "../ui/call-windows.ts";
import type { WindowedDetails } from "../ui/windows.ts";
import { renderDelegateCall, renderWindowsResult, type ThemeLike } from "./render.ts";
import { callLines } from "./render-budget.ts";
import { DELEGATE_SCHEMA } from "../core/call/schemas.ts";
import { Throttle, UPDATE_INTERVAL_MS } from "../ui/throttle.ts";
import type { ToolContext, ToolEnv } from "./tool-env.ts";
import { startInBackground } from "./background.ts";
import { withWorkflow } from "../core/call/workflow.ts";
import { childrenResultFields, refusedCall, TASKS_OUTPUT_SCHEMA } from "../core/call/results.ts";

type DelegateArgs = Parameters<typeof renderDelegateCall>[0];

export function delegateTool(env: ToolEnv) {
  return {
    name: "delegate_to_subagents",
    label: "Delegate to sub-agents",
    // Terse on purpose (all of it is in every request the parent sends): bench/prompt-footprint.ts measures it.
    description: TOOL_TEXTS.delegate_to_subagents.description,
    // pi ≥ 0.80 lists a custom tool in the system prompt only with a snippet; the guidelines say *when* to use it.
    promptSnippet: "Run independent tasks in parallel sub-agents",
    promptGuidelines: [...TOOL_TEXTS.delegate_to_subagents.guidelines],
    parameters: DELEGATE_SCHEMA,
    outputSchema: TASKS_OUTPUT_SCHEMA,
    async execute(
      id: string,
      rawParams: unknown,
      signal: AbortSignal | undefined,
      onUpdate: ((r: unknown) => void) | undefined,
      ctx: ToolContext,
    ) {
      const call = env.begin(ctx, { name: "delegate_to_subagents", id });
      let params: DelegateParams;
      try {
        params = parseDelegateParams(
          await withWorkflow(rawParams, ctx, () => call.engine(), call.session.allowedWorkflows),
        );
      } catch (err) {
        if (err instanceof InputError) throw new Error(`Invalid delegate_to_subagents call: ${err.message}`);
        throw err;
      }
      const engine = await call.engine();
      const prepared = await prepareCall(engine, delegateToolRequest(params, ctx.cwd), await call.front(engine));
      if ("refusal" in prepared) return refusedCall(prepared.refusal);
      if (params.background) return startInBackground(call, engine, prepared.call);
      const windows = callWindows(engine, prepared.call.tasks);
      const update = (details: WindowedDetails) =>
        onUpdate?.({ content: [{ type: "text", text: `Sub-agents: ${details.status}` }], details });
      const throttle = new Throttle(update, UPDATE_INTERVAL_MS, realClock);
      const tick = setInterval(() => throttle.push(windows.snapshot(Date.now())), 1000);
      let outcomes: TaskOutcome[];
      try {
        const running = await call.start(engine, prepared.call, {
          signal,
          onEvent: (e) => {
            if (windows.apply(e, Date.now())) throttle.push(windows.snapshot(Date.now()));
          },
        });
        if ("refusal" in running) return refusedCall(running.refusal);
        outcomes = await running.outcomes;
      } finally {
        clearInterval(tick);
        throttle.cancel();
      }
      const details = windows.snapshot(Date.now());
      const isolated = isolationDetails(outcomes);
      return {
        content: [{ type: "text", text: delegateResultText(outcomes) }],
        details: isolated ? { ...details, isolation: isolated } : details,
        ...childrenResultFields(outcomes),
      };
    },
    // pi ≥ 1.0 passes a render context (`expanded`, the call's `args`); older pis only the first arguments.
    renderCall: (args: DelegateArgs, theme: ThemeLike, context?: { expanded?: boolean }) =>
      renderDelegateCall(args, theme, context?.expanded === true),
    renderResult: (
      result: { details?: WindowedDetails; content?: { text?: string }[] },
      opts: { expanded: boolean },
      theme: ThemeLike,
      context?: { args?: DelegateArgs },
    ) =>
      renderWindowsResult(result.details, opts.expanded, theme, result.content?.[0]?.text ?? "", () =>
        // Without the call's args (older pis) reserve as if every task had its line: too small beats too tall.
        callLines(
          context?.args
            ? Array.isArray(context.args.tasks)
              ? context.args.tasks.length
              : 0
            : (result.details?.windows?.length ?? 0),
          opts.expanded,
        ),
      ),
  };
}
