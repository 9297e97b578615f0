// How a finished batch reads, the same on a terminal, in a pipe, for `run` and for `delegate`: one line per task
// (icon, name, profile, model, tools, time, cost, session) with why it did not complete under it, each output
// under its own rule, and a totals line last.
import { DEFAULT_AGENT } from "../core/run/task-types.ts";
import { clip, sanitizeLine } from "./text-width.ts";
import {
  endNote,
  globalHeader,
  statusIcon,
  warningLine,
  windowHeader,
  type Style,
  type WindowView,
} from "./windows.ts";

/** A task's end: its header with the session id, what did not go as asked (its warnings: a model substituted, an
 *  agent file read leniently, an output cut; those in `printed`, already shown as it started, are left out), and the
 *  reason on its own line when it did not complete. */
export function endLines(v: WindowView, width: number, style: Style, printed: readonly string[] = []): string[] {
  const note = endNote(v, width, style);
  const shown = new Set(printed);
  const warnings = (v.warnings ?? []).filter((w) => !shown.has(w));
  return [
    windowHeader(v, style, width, { session: true }),
    ...warnings.map((w) => warningLine(w, width, style)),
    ...note,
  ];
}

/** The last frame on a terminal: every task, however many rows that takes. */
export function finalFrame(views: WindowView[], width: number, style: Style): string[] {
  return [clip(style.bold(globalHeader(views)), width), ...views.flatMap((v) => endLines(v, width, style))];
}

/** `4 completed, 2 failed, 1 cancelled · 11.3s · $0.0123` */
export function totalsLine(views: WindowView[], wallMs: number, style: Style): string {
  const n = (s: WindowView["status"]) => views.filter((v) => v.status === s).length;
  const counts = [`${n("completed")} completed`];
  if (n("error")) counts.push(style.red(`${n("error")} failed`));
  if (n("cancelled")) counts.push(style.yellow(`${n("cancelled")} cancelled`));
  if (n("skipped")) counts.push(style.yellow(`${n("skipped")} skipped`));
  const cost = views.reduce((sum, v) => sum + v.cost, 0);
  return [counts.join(", "), `${(wallMs / 1000).toFixed(1)}s`, ...(cost > 0 ? [`$${cost.toFixed(4)}`] : [])].join(
    " · ",
  );
}

/** The rule above one task's output: `── name (session) ───…`, as wide as the terminal allows. */
export function outputRule(name: string, sessionId: string, width: number, style: Style): string {
  const label = `── ${sanitizeLine(name)} (${sessionId}) `;
  const fill = Number.isFinite(width) ? Math.max(2, Math.min(width, 80) - label.length) : 2;
  return style.dim(clip(`${label}${"─".repeat(fill)}`, width));
}

/** A task starting, in plain (line-by-line) output: `● name • profile • session`. */
export function startLine(name: string, profile: string | undefined, sessionId: string, style: Style): string {
  return `${statusIcon("running", style)} ${style.bold(sanitizeLine(name))} • ${sanitizeLine(profile ?? DEFAULT_AGENT)} • ${style.dim(sessionId)}`;
}
