// `sessions --running`: what is still in flight, and who owns it — the registry's live owners (which also
// know queued tasks that have no run yet) joined with the store's running sessions.
import { liveOwners, ownerAlive } from "./registry.ts";
import type { RunningRow, SessionStore } from "../core/store/store-types.ts";

export type { RunningRow };

export function runningSessions(store: SessionStore, data: string): RunningRow[] {
  const owners = liveOwners(data);
  const rows: RunningRow[] = [];
  const seen = new Set<string>();
  for (const o of owners) {
    for (const id of o.sessions) {
      const s = store.getSession(id);
      const last = s?.runs[s.runs.length - 1];
      const running = last?.status === "running" && last.ownerPid === o.pid;
      seen.add(id);
      rows.push({ id, name: s?.name ?? "", agent: s?.agent ?? "", status: running ? "running" : "queued", ownerPid: o.pid, role: o.role, startedAt: running ? last.startedAt : null });
    }
  }
  // Runs whose owner keeps no record (an older build, or a pi session) but is alive.
  for (const s of store.listSessions({ limit: 200 })) {
    if (s.status !== "running" || seen.has(s.id)) continue;
    const last = store.getSession(s.id)?.runs.at(-1);
    if (!last || last.status !== "running" || (last.ownerPid !== null && !ownerAlive(data, last.ownerPid))) continue;
    rows.push({ id: s.id, name: s.name, agent: s.agent, status: "running", ownerPid: last.ownerPid, role: "?", startedAt: last.startedAt });
  }
  return rows;
}

export function runningLine(r: RunningRow, now: number): string {
  const age = r.startedAt === null ? "-" : `${Math.round((now - r.startedAt) / 1000)}s`;
  return `${r.id}  ${r.status.padEnd(8)} ${r.agent.padEnd(10)} ${age.padStart(6)}  ${`${r.role} ${r.ownerPid ?? "?"}`.padEnd(17)} ${r.name}`;
}
