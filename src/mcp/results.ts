// What the two tools that run children return over MCP (docs/mcp.md "The tools and what they return"): pi's results
// (docs/pi-extension.md), less pi's own fields, with the children's usage and cost in the text too (an MCP host counts
// only its own model's spend). Each is a function of the tasks' outcomes alone, so a call is answered the same way
// live, from a replayed retry and from the records a later server reads back.
import { childrenResultFields, refusedCall, startedLine, startedTasks } from "../core/call/results.ts";
import type { Refusal } from "../core/call/request.ts";
import { delegateResultText } from "../core/run/outcome-text.ts";
import type { TaskOutcome } from "../core/run/task-types.ts";
import { usd } from "../core/session-caps.ts";
import type { SessionStore } from "../core/store/store-types.ts";
import { addUsage, emptyUsage } from "../core/types.ts";
import { outcomeOf } from "../ui/recorded.ts";
import { subagentResult } from "../ui/subagent-result.ts";
import type { ToolResult } from "./protocol/wire.ts";
import type { TaskKind } from "./task-index.ts";

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

export const RESULTS: Record<TaskKind, (outcomes: TaskOutcome[]) => ToolResult> = {
  delegate: (outcomes) => ({
    content: [{ type: "text", text: `${delegateResultText(outcomes)}\n\n${usageLine(outcomes)}` }],
    ...structured(outcomes),
  }),
  subagent: (outcomes) => {
    const [o] = outcomes;
    // The text is pi's (its header, the finalized result); `task` only goes into pi's details, which MCP leaves out.
    const text = subagentResult(o, "", o.sessionId.slice(0, 8)).content[0].text;
    return { content: [{ type: "text", text: `${text}\n\n${usageLine([o])}` }], ...structured([o]) };
  },
};

const BACKGROUND_HINT =
  "get_subagent_output returns an output by session id (wait: true blocks until it ends); they stop when this MCP server does.";

/** The answer to a call started in the background: its tasks' session ids, now. */
export const STARTED: Record<
  TaskKind,
  (tasks: readonly { name: string; sessionId: string; agent: string }[]) => ToolResult
> = {
  delegate: (tasks) => ({
    content: [{ type: "text", text: `${tasks.map(startedLine).join("\n")}\n${BACKGROUND_HINT}` }],
    structuredContent: startedTasks(tasks),
  }),
  subagent: ([t]) => ({
    content: [
      {
        type: "text",
        text: `**Status:** RUNNING\n**Session ID:** \`${t.sessionId}\`\n\n---\n\nStarted in the background. ${BACKGROUND_HINT}`,
      },
    ],
    structuredContent: startedTasks([t]),
  }),
};

/** The outcomes of a call's tasks as their records have them (a task still running says so). */
export function recordedOutcomes(store: SessionStore, sessions: readonly string[]): TaskOutcome[] {
  return sessions.map((id) => outcomeOf(id, store.getSession(id), false));
}
