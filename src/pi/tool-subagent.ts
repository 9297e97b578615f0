// `subagent {agent, task, sessionId?}` (docs/pi-extension.md): one child with a sticky session, a result text
// that starts with the **Status:** / **Session ID:** header, and details {mode, runId, results[], error?,
// sessionId, finalized}. Failures come back as results carrying details.error, as the spec describes.
import { realClock } from "../core/host.ts";
import { TOOL_TEXTS } from "../core/call/tool-texts.ts";
import { subagentFlow } from "../core/call/tools/subagent.ts";
import type { ErrorCode } from "../core/types.ts";
import { callWindows, type CallWindows } from "../ui/call-windows.ts";
import type { TaskOutcome } from "../core/run/task-types.ts";
import type { WindowedDetails } from "../ui/windows.ts";
import { subagentResult, type SubagentDetails } from "../ui/subagent-result.ts";
import { renderSimpleCall, renderWindowsResult, type ThemeLike } from "./render.ts";
import { SUBAGENT_SCHEMA } from "../core/call/schemas.ts";
import { Throttle, UPDATE_INTERVAL_MS } from "../ui/throttle.ts";
import type { ToolContext, ToolEnv } from "./tool-env.ts";
import { launchBackground } from "./background.ts";
import { childrenResultFields, refusedTasks, startedTasks, TASKS_OUTPUT_SCHEMA } from "../core/call/results.ts";

function failure(code: ErrorCode, message: string, mode: "single" | "management" = "single") {
  const details: SubagentDetails = { mode, results: [], error: { code, message } };
  return {
    content: [{ type: "text", text: message }],
    details,
    isError: true,
    structuredContent: refusedTasks(code, message),
  };
}

/** The spec's header with a status of its own: the result is still to come, as a notice. */
function backgroundResult(sessionId: string, runId: string, agent: string) {
  const text = `**Status:** RUNNING\n**Session ID:** \`${sessionId}\`\n\n---\n\nStarted in the background. A notice arrives when it ends; get_subagent_output with this session id and wait: true waits for it.`;
  const details: SubagentDetails = { mode: "single", runId, results: [], sessionId };
  return {
    content: [{ type: "text", text }],
    details: { ...details, background: true },
    structuredContent: startedTasks([{ name: agent, sessionId, agent }]),
  };
}

export function subagentTool(env: ToolEnv) {
  return {
    name: "subagent",
    label: "Sub-agent",
    description: TOOL_TEXTS.subagent.description,
    promptSnippet: "One task to a named agent; its sessionId continues it",
    parameters: SUBAGENT_SCHEMA,
    outputSchema: TASKS_OUTPUT_SCHEMA,
    async execute(
      id: string,
      params: unknown,
      signal: AbortSignal | undefined,
      onUpdate: ((r: unknown) => void) | undefined,
      ctx: ToolContext,
    ) {
      const call = env.begin(ctx, { name: "subagent", id });
      type Running = { windows: CallWindows; outcomes: Promise<TaskOutcome[]> | null; stop?: () => void };
      const run = await subagentFlow(
        params,
        call.toolFront<Running>(async (engine, prepared, background) => {
          const windows = callWindows(engine, prepared.tasks);
          windows.start(0, Date.now());
          if (background) {
            const refusal = await launchBackground(call, engine, prepared);
            return refusal ? { refusal } : { running: { windows, outcomes: null } };
          }
          const [input] = prepared.tasks;
          const throttle = new Throttle(
            (w: WindowedDetails) => {
              const state = w.windows[0];
              const details: SubagentDetails = { mode: "single", results: [], sessionId: input.sessionId, window: w };
              onUpdate?.({ content: [{ type: "text", text: `${input.agent}: ${state.toolCount} tools` }], details });
            },
            UPDATE_INTERVAL_MS,
            realClock,
          );
          const running = await call.start(engine, prepared, {
            signal,
            onEvent: (e) => {
              if (e.type === "taskWarnings") windows.warn(0, e.warnings);
              if (e.type !== "taskProgress") return;
              windows.event(0, e.state);
              throttle.push(windows.snapshot(Date.now()));
            },
          });
          if ("refusal" in running) return running;
          return { running: { windows, outcomes: running.outcomes, stop: () => throttle.cancel() } };
        }),
      );
      // Every refusal is a result with details.error, never a thrown tool error (docs/pi-extension.md "Errors").
      if ("refusal" in run) return failure(run.refusal.code, run.refusal.message, run.refusal.mode);
      const [input] = run.call.tasks;
      const runId = input.sessionId.slice(0, 8);
      const { windows } = run.running;
      if (!run.running.outcomes) return backgroundResult(input.sessionId, runId, run.params.agent);
      const [outcome] = await run.running.outcomes;
      run.running.stop?.();
      windows.end(0, outcome, Date.now());
      const result = subagentResult(outcome, run.params.task, runId);
      return {
        ...result,
        details: { ...result.details, window: windows.snapshot(Date.now()) },
        ...childrenResultFields([outcome]),
      };
    },
    renderCall: (args: { agent?: string; task?: string }, theme: ThemeLike) =>
      renderSimpleCall("subagent", `${args?.agent ?? ""} ${(args?.task ?? "").slice(0, 80)}`, theme),
    renderResult: (
      result: { details?: SubagentDetails; content?: { text?: string }[] },
      opts: { expanded: boolean },
      theme: ThemeLike,
    ) => renderWindowsResult(result.details?.window, opts.expanded, theme, result.content?.[0]?.text ?? ""),
  };
}
