// The texts about finished tasks (docs/pi-extension.md "Tools"), shared by the pi tool and the CLI.
import { DEFAULT_AGENT } from "./task-types.ts";
import type { TaskOutcome } from "./task-types.ts";
import { shareBytes, truncateHeadTail, utf8Length } from "../truncate.ts";
import { isolationLines } from "./launch/isolation.ts";

/** Output budget of the whole tool result, split between tasks (a short output's room goes to the long ones); each
 *  task keeps its head and tail. */
export const TOTAL_OUTPUT_BYTES = 48 * 1024;
/** The least of an output a result keeps, however many tasks share the budget. */
export const MIN_OUTPUT_BYTES = 2048;

/** Status, task name, error (if any), session id and profile info (tasks without a profile show none). */
export function statusLine(o: TaskOutcome): string {
  const r = o.result;
  const fellBack = r.failedModels?.length
    ? `, model: ${r.model ?? "default"} after ${r.failedModels.join(", ")} failed`
    : "";
  const where = `${o.agent && o.agent !== DEFAULT_AGENT ? `profile: ${o.agent}, session: ${o.sessionId}` : `session: ${o.sessionId}`}${fellBack}`;
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

/** A task's output within `maxBytes`: its head and tail, and where the rest is. */
export function boundedOutput(o: TaskOutcome, maxBytes: number, maxLines = 400): string {
  return truncateHeadTail(o.result.output ?? "", {
    maxBytes,
    maxLines,
    hint: `get_subagent_output with sessionId "${o.sessionId}" returns the full text`,
  }).text;
}

/** Every task's status line first, then each output within its share of the budget. */
export function delegateResultText(outcomes: TaskOutcome[]): string {
  const shares = shareBytes(
    outcomes.map((o) => utf8Length(o.result.output ?? "")),
    TOTAL_OUTPUT_BYTES,
    MIN_OUTPUT_BYTES,
  );
  const parts = [outcomes.map(statusLines).join("\n")];
  const isolated = isolationLines(outcomes);
  if (isolated.length) parts.push(`Isolation:\n${isolated.join("\n")}`);
  outcomes.forEach((o, i) => {
    if (o.result.output) parts.push(`=== ${o.name} (session: ${o.sessionId}) ===\n${boundedOutput(o, shares[i])}`);
  });
  return parts.join("\n\n");
}
