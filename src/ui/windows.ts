// The rolling progress windows of spec 000, as plain lines. Shared by the CLI (ANSI via picocolors) and the
// pi extension (pi's theme): each passes its own Style, so the layout lives in one place.
import { clip, sanitizeLine } from "./text-width.ts";

export type WindowStatus = "queued" | "running" | "completed" | "error";

export type WindowView = {
  name: string;
  status: WindowStatus;
  sessionId: string;
  profile?: string;
  /** "provider/model" as the child reported it. */
  model?: string;
  thinking?: string;
  toolCount: number;
  /** The child's todo list progress, when it keeps one. */
  todos?: { completed: number; total: number };
  elapsedMs: number;
  timeoutSec: number;
  cost: number;
  lines: string[];
  error?: string;
};

/** What a batch of windows looks like at one moment (the pi tool's `details`). */
export type WindowedDetails = {
  windows: WindowView[];
  maxLinesPerWindow: number;
  status: "running" | "done";
  sessionIds: string[];
};

export type Style = {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
};

export const plainStyle: Style = { bold: (s) => s, dim: (s) => s, red: (s) => s, green: (s) => s, yellow: (s) => s, cyan: (s) => s };

export function statusIcon(status: WindowStatus, style: Style): string {
  switch (status) {
    case "queued":
      return style.dim("○");
    case "running":
      return style.yellow("●");
    case "completed":
      return style.green("✓");
    case "error":
      return style.red("✗");
  }
}

export function globalHeader(views: WindowView[]): string {
  const count = (s: WindowStatus) => views.filter((v) => v.status === s).length;
  const parts = [`${count("running")} running`, `${count("completed")} done`];
  if (count("error")) parts.push(`${count("error")} error`);
  if (count("queued")) parts.push(`${count("queued")} queued`);
  return `Sub-agents: ${parts.join(", ")}`;
}

export function windowHeader(v: WindowView, style: Style): string {
  const parts = [`${statusIcon(v.status, style)} ${style.bold(v.name)}`];
  const model = v.model ? `${v.model}${v.thinking ? ` ${v.thinking}` : ""}` : "";
  if (v.profile || model) parts.push(`${v.profile ?? "default"}${model ? ` (${model})` : ""}`);
  parts.push(`${v.toolCount} tool${v.toolCount === 1 ? "" : "s"}`);
  // Spec 000: only while the list is active and incomplete.
  if (v.todos && v.todos.completed < v.todos.total) parts.push(`[${v.todos.completed}/${v.todos.total}]`);
  parts.push(`${Math.floor(v.elapsedMs / 1000)}s/${v.timeoutSec}s`);
  if (v.cost > 0) parts.push(`$${v.cost.toFixed(4)}`);
  return parts.join(" • ");
}

function isToolLine(line: string): boolean {
  return /^\S+ → /.test(line) || line.startsWith("  ");
}

export type RenderOptions = { width: number; maxLines: number; expanded: boolean; style: Style; showFooter?: boolean };

/** One window: header, its last lines (all of them when expanded), and the error if any. */
export function renderWindow(v: WindowView, o: RenderOptions): string[] {
  const out = [clip(windowHeader(v, o.style), o.width)];
  const body = o.expanded ? v.lines : v.lines.slice(-o.maxLines);
  const hidden = v.lines.length - body.length;
  if (hidden > 0) out.push(o.style.dim(clip(`  … ${hidden} earlier line${hidden === 1 ? "" : "s"}`, o.width)));
  for (const raw of body) {
    const line = `  ${sanitizeLine(raw)}`;
    out.push(isToolLine(raw) ? o.style.dim(clip(line, o.width)) : clip(line, o.width));
  }
  if (v.error) out.push(o.style.red(clip(`  ${sanitizeLine(v.error)}`, o.width)));
  return out;
}

export function renderWindows(views: WindowView[], o: RenderOptions): string[] {
  const out = [clip(o.style.bold(globalHeader(views)), o.width)];
  for (const v of views) out.push(...renderWindow(v, o));
  const allDone = views.every((v) => v.status === "completed" || v.status === "error");
  if ((o.showFooter ?? true) && allDone && views.length) {
    out.push(o.style.dim(clip(`Sessions: ${views.map((v) => `${v.name}=${v.sessionId}`).join("  ")}`, o.width)));
  }
  return out;
}
