// What the retrieval tools return (docs/pi-extension.md): get_subagent_output, get_subagent_session and
// list_subagent_profiles, the same text and details in every front that serves them (pi, MCP).
import { sanitize } from "../core/sanitize.ts";
import { profileSummary, type Profile } from "../core/profiles/profile.ts";
import { formatSessionTranscript, latestOutput } from "../core/store/transcript.ts";
import type { SessionRecord, SessionStore } from "../core/store/store-types.ts";
import { isLive } from "./fleet.ts";

export const NO_PROFILES =
  "No subagent profiles found. Add .md files to ~/.pi/agent/agent-profiles/ or .pi/agent-profiles/.";

const lastRun = (record: SessionRecord) => record.runs[record.runs.length - 1];

/** get_subagent_output: the steer/wait notes, then the latest run's output (or that it is still queued or running:
 *  `ongoing`). */
export function outputResult(record: SessionRecord, notes: string[]) {
  const last = lastRun(record);
  const ongoing = isLive(last.status);
  const output = ongoing
    ? `Sub-agent ${record.id} is still ${last.status} (wait: true waits for its end).`
    : latestOutput(record);
  return {
    ongoing,
    text: [...notes, output].join("\n\n"),
    details: { sessionId: record.id, status: last.status, taskName: record.name, runCount: record.runs.length },
  };
}

/** get_subagent_session: every run's transcript. */
export function sessionResult(store: SessionStore, record: SessionRecord) {
  const last = lastRun(record);
  const messages = new Map(record.runs.map((r) => [r.id, store.getMessages(r.id)]));
  const messageCount = [...messages.values()].reduce((n, m) => n + m.length, 0);
  return {
    text: formatSessionTranscript(record, messages),
    details: {
      sessionId: record.id,
      status: last.status,
      taskName: record.name,
      messageCount,
      exitCode: last.exitCode,
      model: last.model,
      runCount: record.runs.length,
    },
  };
}

/** list_subagent_profiles: one summary per profile, the files that were refused with why, then the workflows. */
export function profilesResult(
  profiles: Map<string, Profile>,
  diagnostics: { file: string; reason: string }[],
  workflowLines: string[],
) {
  // Files that could not be used are listed with their reason: otherwise a typo looks like a missing profile.
  const broken = diagnostics.map((d) => `✗ ${sanitize(d.file)}: ${d.reason}`);
  if (profiles.size === 0)
    return { text: [NO_PROFILES, ...broken].join("\n"), details: { count: 0, broken: diagnostics.length } };
  const list = [...profiles.values()].sort((a, b) => a.name.localeCompare(b.name));
  const summaries: Record<string, string> = {};
  for (const p of list) summaries[p.name] = profileSummary(p);
  const text = [
    ...list.map((p) => summaries[p.name]),
    ...(broken.length ? ["", "Not loaded:", ...broken] : []),
    ...workflowLines,
  ].join("\n");
  return { text, details: { count: list.length, profiles: summaries, broken: diagnostics.length } };
}
