// Renderers for the pi tools. pi wants components ({render(width), invalidate()}), and re-renders them on every
// onUpdate, so they only lay out what `details` already holds; the layout itself is the shared windows.ts.
import { clip } from "../ui/text-width.ts";
import { renderWindows, type Style, type WindowedDetails } from "../ui/windows.ts";

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

export function renderDelegateCall(
  args: { tasks?: { profile?: string }[]; profile?: string },
  theme: ThemeLike,
): Component {
  const tasks = Array.isArray(args?.tasks) ? args.tasks : [];
  const perTask = [...new Set(tasks.map((t) => t?.profile).filter((p): p is string => typeof p === "string"))];
  let text = `${theme.fg("toolTitle", theme.bold("delegate_to_subagents"))} ${tasks.length} sub-agent${tasks.length === 1 ? "" : "s"}`;
  if (args?.profile) text += theme.fg("muted", ` (default profile: ${args.profile})`);
  if (perTask.length) text += theme.fg("muted", ` profiles: [${perTask.join(", ")}]`);
  return lines((w) => [clip(text, w)]);
}

export function renderWindowsResult(
  details: WindowedDetails | undefined,
  expanded: boolean,
  theme: ThemeLike,
  fallback: string,
): Component {
  if (!details?.windows) return lines((w) => fallback.split("\n").map((l) => clip(l, w)));
  const style = themeStyle(theme);
  return lines((width) => {
    const out = renderWindows(details.windows, {
      width,
      maxLines: details.maxLinesPerWindow,
      expanded,
      style,
      showFooter: details.status === "done",
    });
    // Expanded (Ctrl+O): which pi the children ran, since it may be the embedded one or the user's own.
    return expanded && details.pi ? [...out, clip(style.dim(`children: ${details.pi}`), width)] : out;
  });
}

/** get_subagent_output / get_subagent_session: up to maxLines lines, then `... (N more lines)`. */
export function renderTruncating(text: string, maxLines: number, expanded: boolean, theme: ThemeLike): Component {
  const all = text.split("\n");
  return lines((w) => {
    if (expanded || all.length <= maxLines) return all.map((l) => clip(l, w));
    return [
      ...all.slice(0, maxLines).map((l) => clip(l, w)),
      theme.fg("dim", `... (${all.length - maxLines} more lines)`),
    ];
  });
}

export function renderSimpleCall(name: string, detail: string, theme: ThemeLike): Component {
  const text = `${theme.fg("toolTitle", theme.bold(name))}${detail ? ` ${theme.fg("muted", detail)}` : ""}`;
  return lines((w) => [clip(text, w)]);
}
