// Mirrors sub-agent runs into the parent pi session (pi.appendEntry "pi-subagents") and rebuilds them on
// session_start, so a session file carries its sub-agents with it (docs/pi-extension.md "Lifecycle").
// One entry when a run starts (status running) and one when it ends: a parent that died in between leaves the
// "running" entry as the last word, which the rebuild turns into the spec's interrupted error.
import { sanitize } from "../core/sanitize.ts";
import type { ResolvedTask, TaskOutcome } from "../core/run/task-types.ts";
import { INTERRUPTED_MESSAGE, type ImportedRun } from "../core/store/store-types.ts";
import type { RunResult } from "../core/types.ts";

export const ENTRY_TYPE = "pi-subagents";

const OUTPUT_CAP = 64 * 1024;
const MESSAGES_CAP = 200;
const MESSAGE_TEXT_CAP = 2000;

/** What is mirrored: exactly what the store can import back, plus a format version. */
export type SubagentEntry = ImportedRun & { v: 1 };

const cap = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);
/** Prompts are mirrored sanitized too: the session file outlives this run. */
const prompt = (s: string) => sanitize(cap(s, OUTPUT_CAP));

export function startEntry(input: ResolvedTask): SubagentEntry {
  return {
    v: 1,
    sessionId: input.sessionId,
    name: input.name,
    agent: input.agent,
    cwd: input.cwd,
    prompt: prompt(input.prompt),
    status: "running",
    at: Date.now(),
  };
}

export function toEntry(outcome: TaskOutcome, input: ResolvedTask): SubagentEntry {
  const r: RunResult = outcome.result;
  return {
    v: 1,
    sessionId: outcome.sessionId,
    name: outcome.name,
    agent: outcome.agent,
    cwd: input.cwd,
    prompt: prompt(input.prompt),
    status: r.status,
    output: cap(r.output, OUTPUT_CAP),
    error: r.error,
    errorCode: r.errorCode,
    finalized: r.finalized,
    usage: r.usage,
    model: r.model,
    exitCode: r.exitCode,
    sessionFile: r.sessionFile,
    messages: r.messages.slice(-MESSAGES_CAP).map((m) => ({ ...m, text: cap(m.text, MESSAGE_TEXT_CAP) })),
    at: Date.now(),
  };
}

/** Reads entries back: malformed ones are skipped, and a run whose last entry says running was interrupted. */
export function readEntries(entries: { type?: string; customType?: string; data?: unknown }[]): SubagentEntry[][] {
  const runs: SubagentEntry[] = [];
  const open = new Map<string, number>();
  for (const e of entries) {
    if (e?.type !== "custom" || e.customType !== ENTRY_TYPE) continue;
    const d = e.data as Partial<SubagentEntry> | undefined;
    if (d?.v !== 1 || typeof d.sessionId !== "string" || typeof d.status !== "string") continue;
    const entry = d as SubagentEntry;
    const at = open.get(entry.sessionId);
    if (at !== undefined) {
      // The end entry of the run that was open replaces its start entry.
      runs[at] = entry;
      if (entry.status !== "running") open.delete(entry.sessionId);
      continue;
    }
    if (entry.status === "running") open.set(entry.sessionId, runs.length);
    runs.push(entry);
  }
  const bySession = new Map<string, SubagentEntry[]>();
  for (const r of runs) {
    const fixed: SubagentEntry =
      r.status === "running" ? { ...r, status: "error", error: INTERRUPTED_MESSAGE, errorCode: "SUBAGENT_FAILED" } : r;
    const list = bySession.get(r.sessionId);
    if (list) list.push(fixed);
    else bySession.set(r.sessionId, [fixed]);
  }
  return [...bySession.values()];
}
