// How a finished batch is printed: the end of a plain `delegate`, and what `wait` and `attach` print once tasks end.
import type { TaskOutcome } from "../../core/run/task-types.ts";
import { printable } from "../../core/sanitize.ts";
import { truncateHeadTail } from "../../core/truncate.ts";
import { endedViews } from "../../ui/recorded.ts";
import { endLines, outputRule, totalsLine } from "../../ui/summary.ts";
import { plainStyle, type Style } from "../../ui/windows.ts";

const OUTPUT_BYTES = 8 * 1024;
const OUTPUT_LINES = 80;

/** Like the end of a plain `delegate`: one end line per task (unless a last frame showed them), each output under
 * its rule, the totals. */
export function printEnded(
  outcomes: TaskOutcome[],
  style: Style = plainStyle,
  width = Infinity,
  o: { endLines?: boolean } = {},
): void {
  if (!outcomes.length) return;
  const log = (l: string) => console.log(l);
  const views = endedViews(outcomes);
  if (o.endLines ?? true) for (const v of views) for (const l of endLines(v, width, style)) log(l);
  printOutputs(outcomes, width, style, log);
  log("");
  log(totalsLine(views, Math.max(...outcomes.map((o) => o.result.durationMs)), style));
}

export function printOutputs(outcomes: TaskOutcome[], width: number, style: Style, log: (l: string) => void): void {
  for (const o of outcomes) {
    if (!o.result.output.trim()) continue;
    log("");
    log(outputRule(o.name, o.sessionId, width, style));
    const t = truncateHeadTail(o.result.output, {
      maxBytes: OUTPUT_BYTES,
      maxLines: OUTPUT_LINES,
      hint: `full output: subagents output ${o.sessionId}`,
    });
    // A child's text, shown to a person: nothing in it acts on the terminal (--json keeps the bytes).
    log(printable(t.text.replace(/\n+$/, "")));
  }
}
