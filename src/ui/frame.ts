// One live frame for a terminal of `rows` × `width`: every task keeps at least its header line. When the windows
// do not fit, finished tasks collapse to one line first (with why they failed), then running windows share the
// rows that are left, evenly (the busiest first for what does not divide); only when not even the headers fit are
// the last ones summarised in one line. The CLI's live frame and pi's tool row both fit by this rule.
import { clip, visibleWidth } from "./text-width.ts";
import {
  displayLines,
  globalHeader,
  isFinished,
  renderWindow,
  whyNot,
  windowHeader,
  type Style,
  type WindowView,
} from "./windows.ts";

export type FrameOptions = { width: number; rows: number; maxLines: number; style: Style };

/** A finished task in one line: its header, then why it did not complete. The reason gets up to 30 columns
 * of its own, taken from the header's droppable parts (model first), so a narrow terminal still says why. */
export function collapsedLine(v: WindowView, width: number, style: Style): string {
  const why = whyNot(v);
  if (!why) return windowHeader(v, style, width);
  const header = windowHeader(v, style, width - Math.min(visibleWidth(why) + 3, 30));
  const room = width - visibleWidth(header) - 3;
  if (room < 8) return windowHeader(v, style, width);
  const note = clip(why, room);
  return `${header} ${style.dim("—")} ${v.status === "error" ? style.red(note) : style.yellow(note)}`;
}

/** Rows each running window gets for its body: `room` shared evenly, never more than a window has or wants; what
 * does not divide evenly goes to the busiest windows (most tool calls) first. */
function shareRows(wants: number[], room: number, busy: number[]): number[] {
  const got = wants.map(() => 0);
  let left = Math.max(0, room);
  const order = wants.map((_, i) => i).sort((a, b) => busy[b] - busy[a] || a - b);
  let open = order.filter((i) => wants[i] > 0);
  while (left > 0 && open.length) {
    const each = Math.max(1, Math.floor(left / open.length));
    for (const i of open) {
      if (left === 0) break;
      const add = Math.min(each, wants[i] - got[i], left);
      got[i] += add;
      left -= add;
    }
    open = open.filter((i) => got[i] < wants[i]);
  }
  return got;
}

export function fitFrame(views: WindowView[], o: FrameOptions): string[] {
  const top = clip(o.style.bold(globalHeader(views)), o.width);
  const budget = Math.max(1, o.rows - 1);
  const render = { width: o.width, maxLines: o.maxLines, expanded: false, style: o.style };

  const full = views.map((v) => renderWindow({ ...v, output: undefined }, render));
  if (full.reduce((n, w) => n + w.length, 0) <= budget) return [top, ...full.flat()];

  if (views.length > budget) {
    // Not even one line per task: as many headers as fit (running ones first), then a count of the rest.
    const order = views.map((_v, i) => i).sort((a, b) => rank(views[a]) - rank(views[b]));
    const shown = new Set(order.slice(0, budget - 1));
    const lines = views.flatMap((v, i) =>
      shown.has(i)
        ? [isFinished(v.status) ? collapsedLine(v, o.width, o.style) : windowHeader(v, o.style, o.width)]
        : [],
    );
    const rest = views.filter((_, i) => !shown.has(i));
    return [
      top,
      ...lines,
      o.style.dim(clip(`… ${rest.length} more: ${globalHeader(rest).replace(/^Sub-agents: /, "")}`, o.width)),
    ];
  }

  // Finished tasks take one line each, queued ones only their header; running windows share the rest.
  const running = views.map((v) => v.status === "running");
  const bodies = views.map((v) => (v.status === "running" ? displayLines(v.lines).slice(-o.maxLines) : []));
  const fixed = views.length + views.reduce((n, v) => n + (v.status === "running" ? (v.warnings?.length ?? 0) : 0), 0);
  const got = shareRows(
    bodies.map((b) => b.length),
    budget - fixed,
    views.map((v) => v.toolCount),
  );
  const lines: string[] = [top];
  views.forEach((v, i) => {
    if (!running[i]) {
      lines.push(isFinished(v.status) ? collapsedLine(v, o.width, o.style) : windowHeader(v, o.style, o.width));
      return;
    }
    lines.push(
      ...renderWindow({ ...v, lines: got[i] ? bodies[i].slice(-got[i]) : [] }, { ...render, maxLines: got[i] }),
    );
  });
  return lines;
}

const rank = (v: WindowView) => (v.status === "running" ? 0 : v.status === "queued" ? 2 : 1);
