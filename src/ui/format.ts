// Small display formatters shared by the CLI and the pi command.

/** "42s", "5m", "3h", "2d": how long ago, compactly. */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86400) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}

/** 1234 → "1.2k", 1_234_567 → "1.2M". */
export const count = (n: number) =>
  n < 1000 ? `${n}` : n < 1_000_000 ? `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k` : `${(n / 1e6).toFixed(1)}M`;

/** A wall time: "4.2s", "3m 05s", "2h 10m". */
export function duration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const whole = Math.round(s);
  if (whole < 3600) return `${Math.floor(whole / 60)}m ${String(whole % 60).padStart(2, "0")}s`;
  return `${Math.floor(whole / 3600)}h ${String(Math.floor((whole % 3600) / 60)).padStart(2, "0")}m`;
}

/** One line per session for listings: id, status, agent, cost, age, name. */
export function sessionRow(
  r: { id: string; status: string; agent: string; cost: number; updatedAt: number; name: string },
  now: number,
): string {
  const cost = r.cost ? `$${r.cost.toFixed(4)}` : "-";
  return `${r.id}  ${r.status.padEnd(9)} ${r.agent.padEnd(10)} ${cost.padStart(9)}  ${age(now - r.updatedAt).padStart(4)} ago  ${r.name}`;
}
