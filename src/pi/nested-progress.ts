// A call another tool made — in pi 1.x, a codemode script's `tools.delegate_to_subagents(…)` — is drawn by that
// tool (pi shows the script and the names of the calls it made), so our live windows never reach the screen and
// the user would watch an elapsed-time counter. While such a call runs, its progress also goes to a widget above
// the editor: the batch's line and one line per task (a few, for a 24-row terminal), removed when the call ends.
// pi marks these calls: their `tool_call` event carries `parentToolCallId` (pi ≥ 1.0).
import { clip } from "../ui/text-width.ts";
import { globalHeader, windowHeader, type WindowedDetails } from "../ui/windows.ts";
import { lines, themeStyle, type Component, type ThemeLike } from "./render.ts";

/** Task lines in the widget; the rest are counted on one more line. */
const MAX_TASK_LINES = 6;

type WidgetUi = { setWidget?(key: string, content: ((tui: unknown, theme: ThemeLike) => Component) | undefined): void };
type Update = ((result: unknown) => void) | undefined;

/** The widget's lines: running tasks first, then the others in call order. */
export function progressLines(details: WindowedDetails, theme: ThemeLike, width: number): string[] {
  const style = themeStyle(theme);
  const views = details.windows;
  const order = [...views.filter((v) => v.status === "running"), ...views.filter((v) => v.status !== "running")];
  const shown = order.slice(0, MAX_TASK_LINES).map((v) => `  ${windowHeader(v, style, width - 2)}`);
  const more = views.length - shown.length;
  const head = `${style.bold(globalHeader(views))} ${style.dim("(in a codemode script)")}`;
  return [head, ...shown, ...(more > 0 ? [style.dim(`  … ${more} more (/subagents lists every task)`)] : [])].map((l) =>
    clip(l, width),
  );
}

export class NestedCalls {
  private readonly ids = new Set<string>();

  /** pi's `tool_call` event for one of our tools. */
  noteCall(event: { toolCallId?: string; parentToolCallId?: string }): void {
    if (event.parentToolCallId && event.toolCallId) this.ids.add(event.toolCallId);
  }

  /** For one execute: an onUpdate that also draws a nested call's windows in a widget, and the widget's removal. */
  progress(id: string, onUpdate: Update, ctx: { hasUI?: boolean; ui?: WidgetUi }): { onUpdate: Update; close(): void } {
    const ui = ctx?.hasUI ? ctx.ui : undefined;
    if (!this.ids.delete(id) || !ui?.setWidget) return { onUpdate, close() {} };
    const key = `subagents:${id}`;
    const set = (content: Parameters<NonNullable<WidgetUi["setWidget"]>>[1]) => {
      try {
        ui.setWidget!(key, content);
      } catch {
        // a stale context (the pi session was replaced): nothing left to draw on
      }
    };
    return {
      onUpdate: (result) => {
        onUpdate?.(result);
        const details = (result as { details?: WindowedDetails } | undefined)?.details;
        if (details?.windows) set((_tui, theme) => lines((width) => progressLines(details, theme, width)));
      },
      close: () => set(undefined),
    };
  }
}
