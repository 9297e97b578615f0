// The texts about finished tasks (docs/pi-extension.md "Tools"), shared by the pi tool and the CLI.
import type { TaskOutcome } from "./task-types.ts";
import { truncateHeadTail } from "../truncate.ts";
import { isolationLines } from "./launch/isolation.ts";

/** Output budget of the whole tool result, split between tasks; each task keeps its head and tail. */
const TOTAL_OUTPUT_BYTES = 48 * 1024;

/** Status, task name, error (if any), session id and profile info (tasks without a profile show none). */
function statusLine(o: TaskOutcome): string {
  const r = o.result;
  const fellBack = r.failedModels?.length
    ? `, model: ${r.model ?? "default"} after ${r.failedModels.join(", ")} failed`
    : "";
  const where = `${o.agent && o.agent !== "default" ? `profile: ${o.agent}, session: ${o.sessionId}` : `session: ${o.sessionId}`}${fellBack}`;
  if (r.errorCode === "SKIPPED") return `↷ ${o.name}: ${r.error ?? "skipped"} (${where})`;
  return r.status === "completed"
    ? `✓ ${o.name}: completed (${where})`
    : `✗ ${o.name}: error — ${r.error ?? "failed"} (${where})`;
}

/** The status line and, under it, what did not go as asked (the run's warnings: a model substituted, an agent file
 *  read leniently, an output cut, a result not recorded): every front shows them where it shows the run. */
export function statusLines(o: TaskOutcome): string {
  return [statusLine(o), ...(o.result.warnings ?? []).map((w) => `  ⚠ ${w}`)].join("\n");
}

export function delegateResultText(outcomes: TaskOutcome[]): string {
  const per = Math.max(2048, Math.floor(TOTAL_OUTPUT_BYTES / Math.max(1, outcomes.length)));
  const parts = [outcomes.map(statusLines).join("\n")];
  const isolated = isolationLines(outcomes);
  if (isolated.length) parts.push(`Isolation:\n${isolated.join("\n")}`);
  for (const o of outcomes) {
    if (!o.result.output) continue;
    const t = truncateHeadTail(o.result.output, {
      maxBytes: per,
      maxLines: 400,
      hint: `get_subagent_output with sessionId "${o.sessionId}" returns the full text`,
    });
    parts.push(`=== ${o.name} (session: ${o.sessionId}) ===\n${t.text}`);
  }
  return parts.join("\n\n");
}
