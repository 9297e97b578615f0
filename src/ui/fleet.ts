// The /subagents fleet view's list: running and queued sessions first (with who owns them: this pi, another pi,
// a CLI run, a background supervisor), then recent ones, one line each with a cursor. Pure: pi's theme or
// plain text come in as a Style.
import type { RunningRow, SessionSummary } from "../core/store/store-types.ts";
import { age } from "./format.ts";
import { clip, sanitizeLine } from "./text-width.ts";
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

export const FLEET_KEYS = "↑↓ select · Enter open · s steer · x stop · Esc close";

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

export function renderFleet(
  rows: FleetRow[],
  selected: number,
  o: { width: number; style: Style; now: number },
): string[] {
  const { style, width } = o;
  const running = rows.filter((r) => r.status === "running" || r.status === "queued").length;
  const out = [clip(`${style.bold("Sub-agents")} ${style.dim(`· ${running} running · ${FLEET_KEYS}`)}`, width)];
  if (!rows.length) return [...out, style.dim("  No sub-agent sessions yet.")];
  const nameWidth = Math.min(28, Math.max(...rows.map((r) => sanitizeLine(r.name).length)));
  rows.forEach((r, i) => {
    const when = r.status === "running" ? `${age(o.now - r.since)}` : `${age(o.now - r.since)} ago`;
    const parts = [
      i === selected ? style.cyan("▸") : " ",
      statusIcon(r.status, style),
      style.bold(clip(sanitizeLine(r.name), nameWidth).padEnd(nameWidth)),
      r.agent.padEnd(10),
      (r.status === "queued" && r.after ? "waiting" : r.status).padEnd(9),
      when.padStart(8),
      ...(r.after ? [style.dim(`after ${r.after.join(", ")}`)] : []),
      ...(r.owner ? [style.dim(r.owner)] : []),
      ...(r.cost > 0 ? [`$${r.cost.toFixed(4)}`] : []),
      style.dim(r.id),
    ];
    out.push(clip(parts.join(" "), width));
  });
  return out;
}
