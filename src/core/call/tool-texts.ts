// The tools' names and descriptions, one copy for every front that serves them (the pi extension, `subagents mcp`):
// what the model reads about each tool. Terse on purpose: every word is in every request the parent makes.
export const TOOL_TEXTS = {
  delegate_to_subagents: {
    description:
      "Run 1–16 independent tasks in parallel, each in an isolated sub-agent (its own pi process, context, tools and model). " +
      "Returns each task's status and output; get_subagent_output / get_subagent_session fetch more by session id.",
    guidelines: [
      "Use delegate_to_subagents when work splits into independent parts (surveys of many files, reviews, research); keep small or sequential edits yourself.",
      'Sub-agents see none of this conversation (unless context: "fork"): make each prompt self-contained (paths, goal, expected answer).',
    ],
  },
  subagent: {
    description:
      "Delegate one focused task to a named agent (see list_subagent_profiles) running in its own pi process, and get its " +
      "finalized result. Pass the returned sessionId back to continue the same sub-agent with its full context.",
    guidelines: [
      "Use subagent for one specialised job (a named agent) you may want to follow up on; reuse its sessionId instead of re-explaining.",
    ],
  },
  get_subagent_output: {
    description:
      "Get the final output of a sub-agent session's latest run by session id; can steer or wait for a running one.",
    guidelines: [],
  },
  get_subagent_session: {
    description:
      "Get the complete transcript of a sub-agent session (all runs: messages, tool calls, tool results), by session id.",
    guidelines: [],
  },
  list_subagent_profiles: {
    description: "List the named sub-agent profiles (agents) available to delegate_to_subagents and subagent.",
    guidelines: [],
  },
} as const;

export type ToolName = keyof typeof TOOL_TEXTS;
