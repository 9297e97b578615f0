// The /subagents fleet view's list: running and queued sessions first (with who owns them: this pi, another pi,
// a CLI run, a background supervisor), then recent ones, one line each with a cursor. Pure: pi's theme or
// plain text come in as a Style.
import type { RunningRow, SessionSummary } from "../core/store/store-types.ts";
import { age } from "./format.ts";
import { clip, sanitizeLine, visibleWidth } from "./text-width.ts";
import { statusIcon, type Style, type WindowStatus } from "./windows.ts";

export type FleetRow = {
  id: string;
  name: string;
  agent: string;
  status: WindowStatus;
  owner: string;
  since: number;
  cost: number;
  after?: string[];
};

/** A session that runs or waits: the one kind steer and stop can reach. */
export const isLive = (status: string | undefined) => status === "running" || status === "queued";

/** The list's keys; steer and stop only while the picked session runs or waits. */
export function fleetKeys(row: FleetRow | undefined): string {
  return `↑↓ select · Enter open${isLive(row?.status) ? " · s steer · x stop" : ""} · Esc close`;
}

/** A view's title and its keys on one line; narrow, the keys get a line of their own rather than being cut. */
export function titleLines(title: string, keys: string, width: number, style: Style): string[] {
  const dimKeys = style.dim(keys);
  return visibleWidth(`${title} · ${dimKeys}`) <= width
    ? [`${title} ${style.dim("·")} ${dimKeys}`]
    : [clip(title, width), clip(dimKeys, width)];
}

/** Running first (in the registry's order), then the most recent others; `ownPid` names this pi's own tasks. */
export function fleetRows(running: RunningRow[], recent: SessionSummary[], ownPid: number, limit = 30): FleetRow[] {
  const rows: FleetRow[] = running.map((r) => ({
    id: r.id,
    name: r.name || r.id,
    agent: r.agent || "-",
    status: r.status,
    owner: r.ownerPid === ownPid ? "this pi" : `${r.role} ${r.ownerPid ?? "?"}`,
    since: r.startedAt ?? Date.now(),
    cost: 0,
    ...(r.after ? { after: r.after } : {}),
  }));
  const live = new Set(rows.map((r) => r.id));
  for (const s of recent) {
    if (rows.length >= limit) break;
    if (live.has(s.id)) continue;
    // A run recorded as running whose owner is not live is over: the store recovers it on its next open.
    const status: WindowStatus =
      s.status === "completed"
        ? "completed"
        : s.lastErrorCode === "SKIPPED"
          ? "skipped"
          : s.lastErrorCode === "SUBAGENT_CANCELLED"
            ? "cancelled"
            : "error";
    rows.push({ id: s.id, name: s.name || s.id, agent: s.agent, status, owner: "", since: s.updatedAt, cost: s.cost });
  }
  return rows;
}

/** Columns a narrow terminal gives up, first to last; the cursor, icon, name, status and id always stay. */
const DROP_ORDER = ["after", "cost", "owner", "agent", "when"] as const;
type Column = "agent" | "status" | "when" | "after" | "owner" | "cost";
/** Columns are dropped before a name is cut below this (or below its whole length, when shorter). */
const MIN_NAME = 16;

function cells(r: FleetRow, now: number, style: Style): Record<Column, string> {
  return {
    agent: r.agent,
    status: r.status === "queued" && r.after ? "waiting" : r.status,
    when: r.status === "running" ? age(now - r.since) : `${age(now - r.since)} ago`,
    after: r.after ? style.dim(`after ${r.after.join(", ")}`) : "",
    owner: r.owner ? style.dim(r.owner) : "",
    cost: r.cost > 0 ? `$${r.cost.toFixed(4)}` : "",
  };
}

export function renderFleet(
  rows: FleetRow[],
  selected: number,
  o: { width: number; style: Style; now: number; maxLines?: number },
): string[] {
  const { style, width } = o;
  const running = rows.filter((r) => isLive(r.status)).length;
  const title = `${style.bold("Sub-agents")} ${style.dim(`· ${running} running`)}`;
  const head = titleLines(title, fleetKeys(rows[selected]), width, style);
  if (!rows.length) return [...head, style.dim("  No sub-agent sessions yet.")];
  const table = rows.map((r) => cells(r, o.now, style));
  const colWidth = (c: Column) => Math.max(0, ...table.map((t) => visibleWidth(t[c])));
  const fixed: Partial<Record<Column, number>> = { agent: 10, status: 9, when: 8 };
  const present = (["agent", "status", "when", "after", "owner", "cost"] as Column[]).filter((c) => colWidth(c) > 0);
  const full = Math.min(28, Math.max(...rows.map((r) => sanitizeLine(r.name).length)));
  // cursor + icon + name + columns + id (16), a space between each.
  const others = (cols: Column[]) => 4 + cols.reduce((n, c) => n + 1 + Math.max(fixed[c] ?? 0, colWidth(c)), 0) + 17;
  // The fewest columns dropped that leave the name MIN_NAME columns.
  let shown = present;
  for (let k = 0; k <= DROP_ORDER.length; k++) {
    shown = present.filter((c) => !(DROP_ORDER.slice(0, k) as readonly Column[]).includes(c));
    if (width - others(shown) >= Math.min(full, MIN_NAME)) break;
  }
  const nameWidth = Math.max(4, Math.min(full, width - others(shown)));
  const pad = (c: Column, text: string) => {
    const w = fixed[c];
    if (!w) return text;
    return c === "when" ? text.padStart(w) : text.padEnd(w);
  };
  const out = [...head];
  const [from, to] = visibleRows(rows.length, selected, (o.maxLines ?? Number.POSITIVE_INFINITY) - head.length);
  if (from > 0) out.push(style.dim(`  ↑ ${from} more`));
  rows.forEach((r, i) => {
    if (i < from || i >= to) return;
    const parts = [
      i === selected ? style.cyan("▸") : " ",
      statusIcon(r.status, style),
      style.bold(clip(sanitizeLine(r.name), nameWidth).padEnd(nameWidth)),
      ...shown.filter((c) => table[i][c] || fixed[c]).map((c) => pad(c, table[i][c])),
      style.dim(r.id),
    ];
    out.push(clip(parts.join(" "), width));
  });
  if (to < rows.length) out.push(style.dim(`  ↓ ${rows.length - to} more`));
  return out;
}

/**
 * The rows [from, to) a list of `count` shows in `lines` lines, the picked one among them: all when they fit, else
 * a slice around it, each cut side taking one of the lines for its `↑ N more` / `↓ N more`.
 */
export function visibleRows(count: number, selected: number, lines: number): [number, number] {
  if (count <= lines) return [0, count];
  const room = Math.max(1, lines - 2);
  const pick = Math.min(Math.max(selected, 0), count - 1);
  // The picked row a third of the way down: the next ones (where the cursor usually goes) stay in sight.
  let from = Math.max(0, Math.min(pick - Math.floor(room / 3), count - room));
  let to = from + room;
  // A side that is not cut gives its line back to the rows.
  if (from === 0) to = Math.min(count, to + 1);
  if (to === count) from = Math.max(0, from - (from === 0 ? 0 : 1));
  return [from, to];
}
