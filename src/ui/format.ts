// Small display formatters shared by the CLI and the pi command.

/** "42s", "5m", "3h", "2d": how long ago, compactly. */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86400) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

/** One line per session for listings: id, status, agent, cost, age, name. */
export function sessionRow(
  r: { id: string; status: string; agent: string; cost: number; updatedAt: number; name: string },
  now: number,
): string {
  const cost = r.cost ? `$${r.cost.toFixed(4)}` : "-";
  return `${r.id}  ${r.status.padEnd(9)} ${r.agent.padEnd(10)} ${cost.padStart(9)}  ${age(now - r.updatedAt).padStart(4)} ago  ${r.name}`;
}
