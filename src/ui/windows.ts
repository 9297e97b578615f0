// The rolling progress windows (docs/cli.md "What it looks like"), as plain lines. Shared by the CLI (ANSI via picocolors) and the
// pi extension (pi's theme): each passes its own Style, so the layout lives in one place.
import { DEFAULT_AGENT } from "../core/run/task-types.ts";
import { count } from "./format.ts";
import { clip, sanitizeLine, visibleWidth } from "./text-width.ts";

export type WindowStatus = "queued" | "running" | "completed" | "error" | "cancelled" | "skipped";

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
  /** Model turns and tokens so far (in: prompt tokens, cached ones included; out: output tokens). */
  turns?: number;
  tokens?: { in: number; out: number };
  /** Running, but its child has not reported yet (the process is starting): the header says "starting". */
  starting?: boolean;
  lines: string[];
  error?: string;
  /** Head and tail of the task's output once it ended (bounded), for the expanded pi view. */
  output?: string;
  /** Spend against the task's budgets: "turns 3/5 $0.12/$0.50". */
  budget?: string;
  /** Seconds until a rate-limit hold of the call ends (the header says "waiting: rate limited (12s)"). */
  rateWaitSec?: number;
  /** What does not run as the agent file says (model substituted, tools missing): one line each under the header. */
  warnings?: string[];
  /** Tasks this one waits for (`after`): a queued window says so. */
  after?: string[];
  /** The acceptance gate's outcome once the task ended. */
  gate?: { passed: boolean; attempts: number };
  /** The structured result (outputSchema) once the task ended. */
  structured?: unknown;
};

/** What a batch of windows looks like at one moment (the pi tool's `details`). */
export type WindowedDetails = {
  windows: WindowView[];
  maxLinesPerWindow: number;
  status: "running" | "done";
  sessionIds: string[];
  /** Which pi the children run (`pi 1.5.2 · bun 1.4.5 · embedded (…)`), shown in the expanded view. */
  pi?: string;
};

export type Style = {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
};

export const plainStyle: Style = {
  bold: (s) => s,
  dim: (s) => s,
  red: (s) => s,
  green: (s) => s,
  yellow: (s) => s,
  cyan: (s) => s,
};

export const isFinished = (s: WindowStatus) =>
  s === "completed" || s === "error" || s === "cancelled" || s === "skipped";

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
    case "cancelled":
      return style.yellow("⊘");
    case "skipped":
      return style.dim("↷");
  }
}

export function globalHeader(views: WindowView[]): string {
  const count = (s: WindowStatus) => views.filter((v) => v.status === s).length;
  const parts = [`${count("running")} running`, `${count("completed")} done`];
  if (count("error")) parts.push(`${count("error")} error`);
  if (count("cancelled")) parts.push(`${count("cancelled")} cancelled`);
  if (count("skipped")) parts.push(`${count("skipped")} skipped`);
  if (count("queued")) parts.push(`${count("queued")} queued`);
  return `Sub-agents: ${parts.join(", ")}`;
}

/** A header part; `drop` orders what goes first when the line is too wide (0 = never dropped); `glue` joins it
 * to the part before with a space instead of " • ". */
export type Part = { text: string; drop: number; glue?: boolean };

const join = (parts: Part[], sep: string) =>
  parts.map((p, i) => (i === 0 ? p.text : `${p.glue ? " " : sep}${p.text}`)).join("");

/** Joins parts, dropping the most droppable ones until the line fits, then shortening the first part (the name). */
export function fitParts(parts: Part[], width: number, sep = " • "): string {
  let kept = parts;
  while (visibleWidth(join(kept, sep)) > width) {
    const worst = Math.max(...kept.map((p) => p.drop));
    if (worst === 0) break;
    const at = kept.map((p) => p.drop).lastIndexOf(worst);
    kept = kept.filter((_, i) => i !== at);
  }
  const line = join(kept, sep);
  if (visibleWidth(line) <= width) return line;
  const rest = join(kept, sep).slice(kept[0].text.length);
  const room = width - visibleWidth(rest);
  return room < 4 ? clip(line, width) : `${clip(kept[0].text, room)}${rest}`;
}

const seconds = (ms: number) => (ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`);

/**
 * Header of one window: icon and name, profile (model), tools, time, cost. Its shape does not change while a
 * task runs: the profile is always named ("default" for pi's defaults), the model fills in once known.
 * Narrow terminals lose the model first (it is usually the same for every task), then cost, profile, tools;
 * never the elapsed/timeout.
 */
export function windowHeaderParts(v: WindowView, style: Style, o: { session?: boolean } = {}): Part[] {
  const parts: Part[] = [{ text: `${statusIcon(v.status, style)} ${style.bold(sanitizeLine(v.name))}`, drop: 0 }];
  parts.push({ text: sanitizeLine(v.profile ?? DEFAULT_AGENT), drop: 3 });
  if (v.status === "queued")
    return [
      ...parts,
      { text: style.dim(v.after?.length ? `waiting: after ${sanitizeLine(v.after.join(", "))}` : "queued"), drop: 0 },
    ];
  if (v.status === "skipped") return [...parts, { text: style.dim("skipped"), drop: 0 }];
  if (v.model)
    parts.push({ text: sanitizeLine(`(${v.model}${v.thinking ? ` ${v.thinking}` : ""})`), drop: 5, glue: true });
  if (v.starting) parts.push({ text: style.dim("starting"), drop: 0 });
  else parts.push({ text: `${v.toolCount} tool${v.toolCount === 1 ? "" : "s"}`, drop: 2 });
  // The todo segment only while the list is active and incomplete.
  if (v.todos && v.todos.completed < v.todos.total)
    parts.push({ text: `[${v.todos.completed}/${v.todos.total}]`, drop: 2 });
  parts.push({
    text: v.status === "running" ? `${Math.floor(v.elapsedMs / 1000)}s/${v.timeoutSec}s` : seconds(v.elapsedMs),
    drop: 0,
  });
  if (v.budget) parts.push({ text: v.budget, drop: 3 });
  if (v.turns && !v.budget?.includes("turns"))
    parts.push({ text: `${v.turns} turn${v.turns === 1 ? "" : "s"}`, drop: 3 });
  if (v.tokens && (v.tokens.in || v.tokens.out))
    parts.push({ text: `↑${count(v.tokens.in)} ↓${count(v.tokens.out)}`, drop: 4 });
  if (v.cost > 0 && !v.budget?.includes("$")) parts.push({ text: `$${v.cost.toFixed(4)}`, drop: 4 });
  if (v.status === "running" && v.rateWaitSec)
    parts.push({ text: style.yellow(`waiting: rate limited (${v.rateWaitSec}s)`), drop: 0 });
  if (o.session && v.sessionId) parts.push({ text: style.dim(v.sessionId), drop: 1 });
  return parts;
}

export function windowHeader(v: WindowView, style: Style, width = Infinity, o: { session?: boolean } = {}): string {
  return fitParts(windowHeaderParts(v, style, o), width);
}

const isToolLine = (line: string) => /^\S+ → /.test(line) || line.startsWith("  ");

/** A retry line's counters (`↻ retry 2/3 in 4s — `) without which two retries of one failure read the same. */
const RETRY = /^↻ retry \d+\/\d+ in \d+s — /;

/**
 * What a window shows of a child's activity lines. pi's retries read `↻ retry 2/3 in 4s — 503 …`, without the failed
 * attempt's `✗ 503 …` line before them, and one failure retried again and again is one line (the latest count). A
 * step repeated as it was — the same tool call with the same result, the same error — is one step marked `×N`,
 * so five identical failures do not push everything else out of the window.
 */
export function displayLines(raw: string[]): string[] {
  const out: string[] = [];
  for (const line of raw) {
    const retry = /^↻ retry (\d+)\/(\d+) in (\d+)s: (.*)$/.exec(line);
    if (retry) {
      if (out.at(-1) === `✗ ${retry[4]}`) out.pop();
      out.push(`↻ retry ${retry[1]}/${retry[2]} in ${retry[3]}s — ${retry[4]}`);
      continue;
    }
    out.push(line);
  }
  while (out.length && !out.at(-1)!.trim()) out.pop();
  return collapseRepeats(out);
}

/** A step: a line and the indented lines under it (a tool call and its result). */
function steps(lines: string[]): string[][] {
  const out: string[][] = [];
  for (const line of lines) {
    if (line.startsWith("  ") && out.length) out.at(-1)!.push(line);
    else out.push([line]);
  }
  return out;
}

function collapseRepeats(lines: string[]): string[] {
  const kept: { step: string[]; key: string; times: number }[] = [];
  for (const step of steps(lines)) {
    const key = step.join("\n").replace(RETRY, "↻ retry — ");
    const last = kept.at(-1);
    if (last && last.key === key && step.join("").trim()) {
      last.step = step;
      last.times++;
    } else kept.push({ step, key, times: 1 });
  }
  return kept.flatMap(({ step, times }) =>
    times > 1 && !RETRY.test(step[0]) ? [`${step[0]} ×${times}`, ...step.slice(1)] : step,
  );
}

function bodyLine(raw: string, width: number, style: Style): string {
  const line = clip(`  ${sanitizeLine(raw)}`, width);
  if (raw.startsWith("↻ ")) return style.yellow(line);
  if (/^\s*✗ /.test(raw)) return style.red(line);
  return isToolLine(raw) ? style.dim(line) : line;
}

/** Why a task did not complete, in a few words: a cancel says who stopped it when that is known
 * ("Stopped from /subagents", "Cancelled: the tool call was aborted"). */
export function whyNot(v: WindowView): string {
  const first = sanitizeLine((v.error ?? "").split("\n")[0]);
  if (v.status === "cancelled") return first && first !== "Cancelled" ? first : "cancelled";
  if (v.status === "error" || v.status === "skipped") return first || (v.status === "error" ? "failed" : "skipped");
  return "";
}

/** Lines of a command's output an error quotes (a setup's or a gate's last lines), shown under it. */
const QUOTED_LINES = 10;

/** The lines under a finished window that say why it did not complete: the reason, and the last lines of the
 *  command's output when the error quotes them (a failed setup or gate). */
export function endNote(v: WindowView, width: number, style: Style): string[] {
  if (v.status === "cancelled") return [style.yellow(clip(`  ${whyNot(v)}`, width))];
  if (v.status === "skipped") return [style.yellow(clip(`  ${sanitizeLine(v.error ?? "skipped")}`, width))];
  if (v.status !== "error" || !v.error) return [];
  const [first, ...rest] = v.error.split("\n");
  const quoted = rest.filter((l) => l.trim()).slice(-QUOTED_LINES);
  return [
    style.red(clip(`  ${sanitizeLine(first)}`, width)),
    ...quoted.map((l) => style.dim(clip(`    │ ${sanitizeLine(l)}`, width))),
  ];
}

export type RenderOptions = { width: number; maxLines: number; expanded: boolean; style: Style; showFooter?: boolean };

/** A task's warning under its header (a model substituted, tools missing, an output cut), the same on every front. */
export const warningLine = (w: string, width: number, style: Style): string =>
  style.yellow(clip(`  ⚠ ${sanitizeLine(w)}`, width));

/** A finished task's first line of output, collapsed. */
export const firstOutputLine = (output: string, width: number, style: Style): string =>
  style.cyan(clip(`  → ${sanitizeLine(output.split("\n").find((l) => l.trim()) ?? "")}`, width));

/** One window: header, its last lines (all of them when expanded), its output (pi), and why it failed. */
export function renderWindow(v: WindowView, o: RenderOptions): string[] {
  const out = [windowHeader(v, o.style, o.width)];
  for (const w of v.warnings ?? []) out.push(warningLine(w, o.width, o.style));
  const all = displayLines(v.lines);
  const body = o.expanded ? all : o.maxLines > 0 ? all.slice(-o.maxLines) : [];
  const hidden = all.length - body.length;
  if (hidden > 0) out.push(o.style.dim(clip(`  … ${hidden} earlier line${hidden === 1 ? "" : "s"}`, o.width)));
  for (const raw of body) out.push(bodyLine(raw, o.width, o.style));
  if (v.output?.trim()) out.push(...outputLines(v.output, o));
  out.push(...endNote(v, o.width, o.style));
  return out;
}

/** Expanded: the output (already bounded head/tail) under a rule; collapsed: its first line only. */
function outputLines(output: string, o: RenderOptions): string[] {
  if (!o.expanded) return [firstOutputLine(output, o.width, o.style)];
  const lines = output.replace(/\n+$/, "").split("\n");
  return [o.style.dim(clip("  ── output ──", o.width)), ...lines.map((l) => clip(`  ${sanitizeLine(l)}`, o.width))];
}

export function renderWindows(views: WindowView[], o: RenderOptions): string[] {
  const out = [clip(o.style.bold(globalHeader(views)), o.width)];
  for (const v of views) out.push(...renderWindow(v, o));
  if ((o.showFooter ?? true) && views.length && views.every((v) => isFinished(v.status)))
    out.push(...sessionLines(views, o.width, o.style));
  return out;
}

/** `Sessions: a=ID  b=ID`, wrapped onto as many lines as the width needs: an id is never cut. */
export function sessionLines(views: WindowView[], width: number, style: Style): string[] {
  const head = "Sessions: ";
  const indent = " ".repeat(head.length);
  const rows: string[] = [];
  let row = "";
  for (const v of views) {
    const item = `${sanitizeLine(v.name)}=${v.sessionId}`;
    const next = row ? `${row}  ${item}` : item;
    if (row && visibleWidth(head + next) > width) {
      rows.push(row);
      row = item;
    } else row = next;
  }
  rows.push(row);
  return rows.map((r, i) => style.dim(clip(`${i ? indent : head}${r}`, width)));
}
