// delegate_to_subagents (docs/pi-extension.md): 1–16 tasks in parallel, live windows through throttled onUpdate, and a
// result that carries each task's status line AND its output (bounded; get_subagent_output has the rest).
import { realClock } from "../core/host.ts";
import { TOOL_TEXTS } from "../core/call/tool-texts.ts";
import type { TaskOutcome } from "../core/run/task-types.ts";
import { delegateFlow } from "../core/call/tools/delegate.ts";
import { delegateResultText } from "../core/run/outcome-text.ts";
import { isolationDetails } from "../core/run/launch/isolation.ts";
import { callWindows } from "../ui/call-windows.ts";
import type { WindowedDetails } from "../ui/windows.ts";
import { renderDelegateCall, renderWindowsResult, type ThemeLike } from "./render.ts";
import { callLines } from "./render-budget.ts";
import { DELEGATE_SCHEMA } from "../core/call/schemas.ts";
import { Throttle, UPDATE_INTERVAL_MS } from "../ui/throttle.ts";
import type { ToolContext, ToolEnv } from "./tool-env.ts";
import { launchBackground, startedInBackground } from "./background.ts";
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
      const run = await delegateFlow(
        rawParams,
        call.toolFront(async (engine, prepared, background) => {
          if (background) {
            const refusal = await launchBackground(call, engine, prepared);
            return refusal ? { refusal } : { running: null };
          }
          const windows = callWindows(engine, prepared.tasks);
          const update = (details: WindowedDetails) =>
            onUpdate?.({ content: [{ type: "text", text: `Sub-agents: ${details.status}` }], details });
          const throttle = new Throttle(update, UPDATE_INTERVAL_MS, realClock);
          const tick = setInterval(() => throttle.push(windows.snapshot(Date.now())), 1000);
          const stop = () => {
            clearInterval(tick);
            throttle.cancel();
          };
          const running = await call.start(engine, prepared, {
            signal,
            onEvent: (e) => {
              if (windows.apply(e, Date.now())) throttle.push(windows.snapshot(Date.now()));
            },
          });
          if ("refusal" in running) stop();
          return "refusal" in running ? running : { running: { windows, outcomes: running.outcomes, stop } };
        }),
      );
      if ("refusal" in run) {
        // Bad parameters, a workflow not allowed, no pi to run the children: a tool error, as pi shows them.
        if (run.refusal.stage !== "call") throw new Error(run.refusal.message);
        return refusedCall(run.refusal);
      }
      if (!run.running) return startedInBackground(run.call.tasks);
      const { windows, stop } = run.running;
      let outcomes: TaskOutcome[];
      try {
        outcomes = await run.running.outcomes;
      } finally {
        stop();
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
