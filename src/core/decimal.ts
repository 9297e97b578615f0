// Numbers people type (a CLI flag, a front matter field, a settings string): plain decimals only. JavaScript's
// Number() also reads "0x10" as 16, "1e3" as 1000 and "" as 0 — a typo would become a different limit, silently.

const DECIMAL = /^\d+(?:\.\d+)?$/;

/** The value of a plain decimal ("30", "0.5"; spaces around allowed), else NaN. */
export function decimal(text: string): number {
  const t = text.trim();
  return DECIMAL.test(t) ? Number(t) : Number.NaN;
}
