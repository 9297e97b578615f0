// `sessions --running`: what is still in flight, and who owns it — the registry's live owners (which also
// know queued tasks that have no run yet) joined with the store's running sessions.
import { printable } from "../core/sanitize.ts";
import { liveOwners } from "./registry.ts";
import { ownerOf as runOwnerOf, type RunningRow, type SessionStore } from "../core/store/store-types.ts";

export type { RunningRow };

export type QueuedTask = { sessionId?: string; name: string; after?: string[] };

/** A call's tasks as the owner's record lists them while queued: name, and what each waits for (`after`). */
export function waitingOf(
  inputs: readonly QueuedTask[],
): Record<string, { name: string; after: string[] }> | undefined {
  const out: Record<string, { name: string; after: string[] }> = {};
  for (const t of inputs) if (t.sessionId) out[t.sessionId] = { name: t.name, after: t.after ?? [] };
  return Object.keys(out).length ? out : undefined;
}

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
      const waits = running ? undefined : o.waiting?.[id];
      rows.push({
        id,
        name: s?.name ?? waits?.name ?? "",
        agent: s?.agent ?? "",
        status: running ? "running" : "queued",
        ownerPid: o.pid,
        role: o.role,
        startedAt: running ? last.startedAt : null,
        ...(waits?.after.length ? { after: waits.after } : {}),
      });
    }
  }
  // Runs whose owner keeps no record (an older build, or a pi session) but is alive.
  for (const s of store.listSessions({ limit: 200 })) {
    if (s.status !== "running" || seen.has(s.id)) continue;
    const last = store.getSession(s.id)?.runs.at(-1);
    const owner = last ? runOwnerOf(last) : null;
    if (last?.status !== "running" || (owner !== null && !store.ownerAlive(owner))) continue;
    rows.push({
      id: s.id,
      name: s.name,
      agent: s.agent,
      status: "running",
      ownerPid: last.ownerPid,
      role: "?",
      startedAt: last.startedAt,
    });
  }
  return rows;
}

export function runningLine(r: RunningRow, now: number): string {
  const age = r.startedAt === null ? "-" : `${Math.round((now - r.startedAt) / 1000)}s`;
  return `${r.id}  ${r.status.padEnd(8)} ${printable(r.agent).padEnd(10)} ${age.padStart(6)}  ${`${r.role} ${r.ownerPid ?? "?"}`.padEnd(17)} ${r.name}${r.after ? ` (after ${r.after.join(", ")})` : ""}`;
}
