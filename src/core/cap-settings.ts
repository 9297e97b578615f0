// The fan-out and spend caps under `subagents` (maxSpawnsPerSession, maxSessionCost, confirmAbove). Unlike the
// other settings, a project's file cannot raise them: user and project are both read and the lower wins, so a
// repository can only make delegation stricter, never looser (it needs no trust for that).
export type CapSettings = {
  /** Children one pi session may start (foreground and background); per invocation/supervisor in the CLI. */
  maxSpawnsPerSession: number;
  /** USD one pi session's children may spend; unset = no cap. */
  maxSessionCost?: number;
  /** A delegate call with more tasks than this asks the user first (pi with a UI); unset = never asks. */
  confirmAbove?: number;
};

export const DEFAULT_MAX_SPAWNS = 100;

const CAPS: { key: keyof CapSettings; min: number; max: number; whole: boolean }[] = [
  { key: "maxSpawnsPerSession", min: 0, max: 100_000, whole: true },
  { key: "maxSessionCost", min: 0, max: 1_000_000, whole: false },
  { key: "confirmAbove", min: 1, max: 10_000, whole: true },
];

/** Applies the caps of one raw `subagents` object over `out` (mutated); a project value only ever lowers a cap. */
export function mergeCapSettings(
  out: CapSettings,
  r: Record<string, unknown>,
  where: string,
  userScope: boolean,
  warnings: string[],
): void {
  for (const { key, min, max, whole } of CAPS) {
    const v = r[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== "number" || !Number.isFinite(v) || (whole && !Number.isInteger(v))) {
      warnings.push(`${where}: subagents.${key} must be a ${whole ? "whole " : ""}number; ignored`);
      continue;
    }
    // A negative cap is a slip (-1 meant "no limit"?), not a wish to refuse every call: said, and the cap stays as
    // it was (the default, or your own value when a project's says this).
    if (v < 0) {
      const kept = out[key];
      warnings.push(
        `${where}: subagents.${key} = ${v} is negative; ignored${kept === undefined ? " (no cap)" : ` (the cap stays ${kept})`}`,
      );
      continue;
    }
    const clamped = Math.min(max, Math.max(min, v));
    if (clamped !== v)
      warnings.push(`${where}: subagents.${key} = ${v} is out of range ${min}–${max}; using ${clamped}`);
    const current = out[key];
    if (userScope || current === undefined || clamped < current) out[key] = clamped;
    // Said, not just dropped: whoever wrote the project's value expects it to apply.
    else if (clamped > current)
      warnings.push(
        `${where}: subagents.${key} = ${clamped} would raise the cap (${current} from your own settings or the default); a project's settings can only lower it: ignored`,
      );
  }
}
