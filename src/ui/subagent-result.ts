// The `subagent` tool's result (docs/pi-extension.md): the **Status:** / **Session ID:** header, then the
// finalized result, and details {mode, runId, results[], error?, sessionId, finalized}. Shared by the pi and MCP
// fronts, which return the same contract.
import { sanitize } from "../core/sanitize.ts";
import type { TaskOutcome } from "../core/run/task-types.ts";
import { truncateHeadTail } from "../core/truncate.ts";
import type { ErrorCode, FinalizePayload, RunResult, Usage } from "../core/types.ts";
import { emptyUsage } from "../core/types.ts";
import { isolationLines, type IsolationResult } from "../core/run/launch/isolation.ts";
import { parseToolArgs } from "../core/run/process/activity.ts";
import type { WindowedDetails } from "./windows.ts";

const OUTPUT_BYTES = 48 * 1024;

export type DisplayItem =
  | { type: "text"; text: string }
  | { type: "toolCall"; name: string; args: Record<string, unknown> };

export type SingleResult = {
  agent: string;
  task: string;
  exitCode: number;
  usage: Usage;
  error?: string;
  sessionFile?: string;
  output?: string;
  displayItems?: DisplayItem[];
};

export type SubagentDetails = {
  mode: "single" | "management";
  runId?: string;
  results: SingleResult[];
  error?: { code: ErrorCode; message: string };
  sessionId?: string;
  finalized?: FinalizePayload;
  /** An isolated run's branch, changed files and diffstat. */
  isolation?: IsolationResult;
  /** The acceptance gate's outcome (profile `gate`). */
  gate?: { passed: boolean; attempts: number };
  structured?: unknown;
  /** Our live window (same layout as delegate_to_subagents). */
  window?: WindowedDetails;
};

function displayItems(r: RunResult): DisplayItem[] {
  const items: DisplayItem[] = [];
  for (const m of r.messages) {
    if (m.role !== "assistant") continue;
    if (m.text.trim()) items.push({ type: "text", text: m.text });
    for (const c of m.toolCalls) items.push({ type: "toolCall", name: c.name, args: parseToolArgs(c.args) });
  }
  return items.slice(-50);
}

export function subagentResult(o: TaskOutcome, task: string, runId: string) {
  const r = o.result;
  const statusWord = r.finalize?.status ?? (r.status === "completed" ? "SUCCESS" : "ERROR");
  const body =
    r.status === "completed"
      ? r.output
      : [r.error ? `Error: ${r.error}` : "", r.output ? `Partial output:\n${r.output}` : ""]
          .filter(Boolean)
          .join("\n\n");
  const t = truncateHeadTail(body, {
    maxBytes: OUTPUT_BYTES,
    maxLines: 1000,
    hint: `get_subagent_output with sessionId "${o.sessionId}" returns the full text`,
  });
  // What did not go as asked (a model substituted, an agent file read leniently, an output cut) precedes the answer.
  const warned = r.warnings?.length ? `**Warnings:**\n${r.warnings.map((w) => `- ${w}`).join("\n")}\n` : "";
  const text = `**Status:** ${statusWord}\n**Session ID:** \`${o.sessionId}\`\n${warned}\n---\n\n${t.text}`;
  let code: ErrorCode | undefined = r.errorCode;
  if (r.status === "error" && !code) code = "SUBAGENT_FAILED";
  if (!code && t.truncated) code = "SUBAGENT_OUTPUT_TRUNCATED";
  const single: SingleResult = {
    agent: o.agent,
    task: sanitize(task),
    // The child's real exit code; a child that never exited on its own (stopped, never started) counts as 0 or 1.
    exitCode: r.exitCode ?? (r.status === "completed" ? 0 : 1),
    usage: r.usage ?? emptyUsage(),
    ...(r.error ? { error: r.error } : {}),
    ...(r.sessionFile ? { sessionFile: r.sessionFile } : {}),
    output: r.output,
    displayItems: displayItems(r),
  };
  const details: SubagentDetails = {
    mode: "single",
    runId,
    results: [single],
    ...(code
      ? {
          error: {
            code,
            message:
              r.error ??
              r.warnings?.find((w) => w.startsWith("output cut:")) ??
              `Output truncated; get_subagent_output returns the full text`,
          },
        }
      : {}),
    sessionId: o.sessionId,
    ...(r.finalize ? { finalized: r.finalize } : {}),
    ...(r.isolation ? { isolation: r.isolation } : {}),
    ...(r.gate ? { gate: r.gate } : {}),
    ...(r.structured !== undefined ? { structured: r.structured } : {}),
  };
  const lines = isolationLines([o]);
  return { content: [{ type: "text", text: lines.length ? `${text}\n\n---\n\n${lines.join("\n")}` : text }], details };
}
