// The tools' names and descriptions, one copy for every front that serves them (the pi extension, `subagents mcp`):
// what the model reads about each tool. Terse on purpose: every word is in every request the parent makes
// (bench/prompt-footprint.ts measures it).
export const TOOL_TEXTS = {
  delegate_to_subagents: {
    description:
      "Run 1–16 tasks in parallel sub-agents, each a pi process with its own context. " +
      "Returns their statuses, outputs and session ids (get_subagent_output has more).",
    guidelines: [
      "Delegate independent work (surveys, reviews, research); do small or sequential edits yourself.",
      'Sub-agents see none of this conversation (unless context: "fork"): put paths, goal and expected answer in each prompt.',
    ],
  },
  subagent: {
    description: "Run one task with a named agent; returns its result and a sessionId that continues it.",
    guidelines: [],
  },
  get_subagent_output: {
    description: "A sub-agent's full output by session id; steer or wait for a running one.",
    guidelines: [],
  },
  get_subagent_session: {
    description: "A sub-agent session's whole transcript (every run: messages, tool calls and results) by session id.",
    guidelines: [],
  },
  list_subagent_profiles: {
    description: "List the named agents (profiles) for delegate_to_subagents and subagent.",
    guidelines: [],
  },
  subagent_batch: {
    description:
      "One prompt over every item of a .jsonl/.csv file ({{column}} = the item's value), in the background; resumable. start returns a job id; status and export report it.",
    guidelines: [],
  },
} as const;

export type ToolName = keyof typeof TOOL_TEXTS;

/** What a client shows for each tool (MCP's `title`). */
export const TOOL_TITLES: Record<ToolName, string> = {
  delegate_to_subagents: "Delegate to sub-agents",
  subagent: "Run a sub-agent",
  get_subagent_output: "Sub-agent output",
  get_subagent_session: "Sub-agent transcript",
  list_subagent_profiles: "List sub-agent profiles",
  subagent_batch: "Batch job over a file's items",
};

/** MCP's hints about each tool (read by permission extensions and clients): the retrieval tools only read our own
 *  records; a delegation runs processes that may change anything, and reach models over the network. */
export type ToolAnnotations = {
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint: boolean;
};

const DELEGATION: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

export const ANNOTATIONS: Record<ToolName, ToolAnnotations> = {
  delegate_to_subagents: DELEGATION,
  subagent: DELEGATION,
  // `steer` and `wait` reach a running sub-agent of ours: it reads more than once, but changes nothing of the user's.
  get_subagent_output: { readOnlyHint: true, idempotentHint: false, openWorldHint: false },
  get_subagent_session: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  list_subagent_profiles: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // `start` runs sub-agents like a delegation; status and export only read.
  subagent_batch: DELEGATION,
};
