// Texts built from stored sessions, exactly as docs/pi-extension.md states them: the get_subagent_session transcript,
// the resume prompt (`Previously: … Instructions: …`), get_subagent_output, and the error messages.
import type { RunRecord, SessionRecord } from "./store-types.ts";
import { resumeRunningMessage } from "./store-types.ts";
import type { StoredMessage } from "../types.ts";

/** A session id as a message quotes it: whole when it could be one, else its start and its length (a tool call's
 *  50 MB "session id" is not sent back whole). */
export const shownId = (id: string) => (id.length <= 64 ? id : `${id.slice(0, 32)}… (${id.length} characters)`);
export const sessionNotFound = (id: string) =>
  `Session "${shownId(id)}" not found. The session may have expired or the ID is incorrect.`;
export const resumeNotFound = (id: string) =>
  `Cannot resume: session "${shownId(id)}" not found. The session may have expired or the ID is incorrect.`;
export const resumeRunning = resumeRunningMessage;
export const NO_TEXT_OUTPUT = "(no text output from sub-agent)";

const RESULT_PREVIEW = 500;
const ARGS_PREVIEW = 120;
const RESUME_CAP = 200 * 1024;

const preview = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}...` : s);

function transcriptLines(messages: StoredMessage[]): string[] {
  const out: string[] = [];
  for (const m of messages) {
    if (m.role === "user" || m.role === "assistant") {
      if (m.text.trim()) out.push(m.text);
    }
    if (m.role === "assistant") {
      for (const c of m.toolCalls) out.push(`→ ${c.name}: ${preview(c.args, ARGS_PREVIEW)}`);
      if (m.error) out.push(`[Error: ${m.error}]`);
    }
    if (m.role === "toolResult") out.push(`[tool result]: ${preview(m.text, RESULT_PREVIEW)}`);
  }
  return out;
}

export function formatSessionTranscript(record: SessionRecord, messagesByRun: Map<number, StoredMessage[]>): string {
  const n = record.runs.length;
  const parts = record.runs.map((run, i) => {
    const lines = transcriptLines(messagesByRun.get(run.id) ?? []);
    if (run.status === "error" && run.error && !lines.some((l) => l === `[Error: ${run.error}]`))
      lines.push(`[Error: ${run.error}]`);
    const body = lines.join("\n");
    return n > 1 ? `=== Run ${i + 1}/${n} (${run.status}) ===\n${body}` : body;
  });
  return parts.join("\n---\n");
}

function toolCallShort(name: string, args: string): string {
  try {
    const a = JSON.parse(args) as Record<string, unknown>;
    const first = a.path ?? a.command ?? a.pattern ?? Object.values(a)[0];
    return `${name}(${typeof first === "string" ? first : JSON.stringify(first ?? "")})`;
  } catch {
    return `${name}(${args})`;
  }
}

function runForResume(run: RunRecord & { messages: StoredMessage[] }, i: number): string {
  const lines = [`--- Run ${i + 1} (${run.status}, ${run.messages.length} messages) ---`];
  for (const m of run.messages) {
    if (m.role === "user") lines.push(`User: ${m.text}`);
    else if (m.role === "assistant") {
      if (m.text.trim()) lines.push(`Assistant: ${m.text}`);
      for (const c of m.toolCalls) lines.push(`Tool Call: ${toolCallShort(c.name, c.args)}`);
      if (m.error) lines.push(`Error: ${m.error}`);
    } else lines.push(`Tool Result: ${preview(m.text, RESULT_PREVIEW)}`);
  }
  if (run.status === "error" && run.error) lines.push(`Error: ${run.error}`);
  return lines.join("\n");
}

export function formatResumePrompt(runs: (RunRecord & { messages: StoredMessage[] })[], prompt: string): string {
  let history = runs.map(runForResume).join("\n\n");
  // Keep the newest part: what the sub-agent did last matters most for continuing.
  if (history.length > RESUME_CAP) history = `… (earlier history omitted)\n${history.slice(-RESUME_CAP)}`;
  return `Previously:\n\n${history}\n\nInstructions:\n\n${prompt}`;
}

/** get_subagent_output: the latest run's output (its finalized result or last assistant text). */
export function latestOutput(record: SessionRecord): string {
  const last = record.runs[record.runs.length - 1];
  if (!last) return NO_TEXT_OUTPUT;
  if (last.output.trim()) return last.output;
  return last.status === "error" && last.error ? `${NO_TEXT_OUTPUT}\n[Error: ${last.error}]` : NO_TEXT_OUTPUT;
}
