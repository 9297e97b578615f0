// Renderers for the pi tools. pi wants components ({render(width), invalidate()}), and re-renders them on every
// onUpdate, so they only lay out what `details` already holds; the layout itself is the shared windows.ts. While
// children run, the windows fit the rows pi leaves them (render-budget.ts) by the CLI's rule (ui/frame.ts); once
// the call ended, the block is compact; expanded (Ctrl+O) shows everything.
import { collapsedLine, fitFrame } from "../ui/frame.ts";
import { clip, sanitizeLine } from "../ui/text-width.ts";
import {
  firstOutputLine,
  globalHeader,
  renderWindows,
  sessionLines,
  warningLine,
  type Style,
  type WindowedDetails,
  type WindowView,
} from "../ui/windows.ts";
import { callLines, rowBudget } from "./render-budget.ts";

export type ThemeLike = { fg(color: string, text: string): string; bold(text: string): string };

export type Component = { render(width: number): string[]; invalidate(): void };

export function lines(fn: (width: number) => string[]): Component {
  return { render: (width) => fn(Math.max(10, width)), invalidate() {} };
}

export function themeStyle(theme: ThemeLike): Style {
  return {
    bold: (s) => theme.bold(s),
    dim: (s) => theme.fg("dim", s),
    red: (s) => theme.fg("error", s),
    green: (s) => theme.fg("success", s),
    yellow: (s) => theme.fg("warning", s),
    cyan: (s) => theme.fg("accent", s),
  };
}

type CallTask = { name?: string; prompt?: string; profile?: string };

/** The call's title, then what each task was asked (one line each) when the rows allow; else the names inline. */
export function renderDelegateCall(
  args: { tasks?: CallTask[]; profile?: string; workflow?: string },
  theme: ThemeLike,
  expanded = false,
): Component {
  const tasks = Array.isArray(args?.tasks) ? args.tasks : [];
  const perTask = [...new Set(tasks.map((t) => t?.profile).filter((p): p is string => typeof p === "string"))];
  const what =
    typeof args?.workflow === "string" && !tasks.length
      ? `workflow ${sanitizeLine(args.workflow)}`
      : `${tasks.length} sub-agent${tasks.length === 1 ? "" : "s"}`;
  let text = `${theme.fg("toolTitle", theme.bold("delegate_to_subagents"))} ${what}`;
  if (args?.profile) text += theme.fg("muted", ` (default profile: ${sanitizeLine(args.profile)})`);
  if (perTask.length) text += theme.fg("muted", ` profiles: [${sanitizeLine(perTask.join(", "))}]`);
  const name = (t: CallTask, i: number) => sanitizeLine(typeof t?.name === "string" ? t.name : `task ${i + 1}`);
  return lines((w) => {
    if (callLines(tasks.length, expanded) === 1)
      return [clip(tasks.length ? `${text}${theme.fg("muted", `: ${tasks.map(name).join(", ")}`)}` : text, w)];
    return [
      clip(text, w),
      ...tasks.map((t, i) => {
        const asked = typeof t?.prompt === "string" ? (t.prompt.split("\n").find((l) => l.trim()) ?? "") : "";
        return clip(`  ${theme.bold(name(t, i))}${theme.fg("dim", ` — ${sanitizeLine(asked.trim())}`)}`, w);
      }),
    ];
  });
}

/**
 * A call's windows. `callRows` is how many lines the call header above takes (it shares the budget). Running:
 * the summary and every task's header on screen, the busiest windows' last lines in what is left. Ended: one line
 * per task (why it failed), the first line of each output when there is room, the session ids.
 */
export function renderWindowsResult(
  details: WindowedDetails | undefined,
  expanded: boolean,
  theme: ThemeLike,
  fallback: string,
  callRows: () => number = () => 1,
): Component {
  if (!details?.windows) return textLines(fallback);
  const style = themeStyle(theme);
  return lines((width) => {
    if (expanded) {
      const out = renderWindows(details.windows, {
        width,
        maxLines: details.maxLinesPerWindow,
        expanded,
        style,
        showFooter: details.status === "done",
      });
      // Which pi the children ran, since it may be the embedded one or the user's own.
      return details.pi ? [...out, clip(style.dim(`children: ${details.pi}`), width)] : out;
    }
    const rows = Math.max(2, rowBudget() - callRows());
    if (details.status === "done") return endedBlock(details.windows, width, rows, style);
    return fitFrame(details.windows, { width, rows, maxLines: details.maxLinesPerWindow, style });
  });
}

/** A call that ended, compact: what `renderWindowsResult` says it shows; a task's warnings (a model substituted,
 * tools missing) and its output's first line when all of them fit. */
function endedBlock(views: WindowView[], width: number, rows: number, style: Style): string[] {
  const sessions = sessionLines(views, width, style);
  const under = views.map((v) => {
    const output = v.status === "completed" && v.output?.trim() ? v.output : undefined;
    return [
      ...(v.warnings ?? []).map((w) => warningLine(w, width, style)),
      ...(output ? [firstOutputLine(output, width, style)] : []),
    ];
  });
  const room = 1 + views.length + under.flat().length + sessions.length <= rows;
  return [
    clip(style.bold(globalHeader(views)), width),
    ...views.flatMap((v, i) => [collapsedLine(v, width, style), ...(room ? under[i] : [])]),
    ...sessions,
  ];
}

/** get_subagent_output / get_subagent_session: up to maxLines lines, then `... (N more lines)`. */
export function renderTruncating(text: string, maxLines: number, expanded: boolean, theme: ThemeLike): Component {
  const all = text.split("\n").map(sanitizeLine);
  return lines((w) => {
    if (expanded || all.length <= maxLines) return all.map((l) => clip(l, w));
    return [
      ...all.slice(0, maxLines).map((l) => clip(l, w)),
      theme.fg("dim", `... (${all.length - maxLines} more lines)`),
    ];
  });
}

/** A tool's text (a child's output, agents' descriptions) as lines for pi's view: nothing in it acts on the terminal. */
export const textLines = (text: string): Component =>
  lines((w) => text.split("\n").map((l) => clip(sanitizeLine(l), w)));

export function renderSimpleCall(name: string, detail: string, theme: ThemeLike): Component {
  const text = `${theme.fg("toolTitle", theme.bold(name))}${detail ? ` ${theme.fg("muted", sanitizeLine(detail))}` : ""}`;
  return lines((w) => [clip(text, w)]);
}
