// A plain text table that fits a width, in the style of `gh` and `kubectl get`: a header row, columns two spaces
// apart, no borders. When the natural widths do not fit, the flexible columns (free text such as a name or a
// path) shrink first, down to their minimum, with `…`; then whole columns go, least important first. Cells are
// sanitized, so stored text cannot move the cursor. Used by `subagents sessions`; written to serve any listing
// (`profiles` can adopt it: give each column a header, a `drop` rank and whether it may shrink).
import { clip, sanitizeLine, visibleWidth } from "./text-width.ts";
import type { Style } from "./windows.ts";

export type Column = {
  header: string;
  /** Right-aligned (numbers, amounts, ages). */
  right?: boolean;
  /** Free text that may be shortened with `…` down to `min` columns. */
  flex?: boolean;
  min?: number;
  /** Order in which columns go when even shortened text does not fit; 0 = never (the default). */
  drop?: number;
  /** Colours a cell (after fitting, so colour codes never count towards the width). */
  color?: (cell: string, row: number) => string;
};

const GAP = "  ";

function naturalWidths(columns: Column[], rows: string[][]): number[] {
  return columns.map((c, i) => Math.max(visibleWidth(c.header), ...rows.map((r) => visibleWidth(r[i] ?? ""))));
}

/** Column widths within `width`, or null for a column that was dropped. Each attempt starts again from the
 * natural widths, so a dropped column gives its room back to the shortened ones. */
function fitWidths(columns: Column[], natural: number[], width: number): (number | null)[] {
  const dropped = new Set<number>();
  for (;;) {
    const widths: (number | null)[] = natural.map((w, i) => (dropped.has(i) ? null : w));
    let over = widths.reduce<number>((n, w) => (w === null ? n : n + w + GAP.length), -GAP.length) - width;
    for (let i = columns.length - 1; i >= 0 && over > 0; i--) {
      const w = widths[i];
      if (w === null || !columns[i].flex) continue;
      const cut = Math.min(over, w - Math.min(w, Math.max(columns[i].min ?? 8, visibleWidth(columns[i].header))));
      widths[i] = w - cut;
      over -= cut;
    }
    if (over <= 0) return widths;
    const candidates = columns
      .map((c, i) => ({ i, rank: dropped.has(i) ? 0 : (c.drop ?? 0) }))
      .filter((c) => c.rank > 0);
    if (!candidates.length) return widths; // nothing left to give up: each line is clipped
    dropped.add(candidates.reduce((a, b) => (b.rank > a.rank ? b : a)).i);
  }
}

/** Lines of the table: header row first (dim), then one line per row; none wider than `width`. */
export function renderTable(columns: Column[], rows: string[][], o: { width: number; style: Style }): string[] {
  const clean = rows.map((r) => columns.map((_, i) => sanitizeLine(r[i] ?? "")));
  const widths = fitWidths(columns, naturalWidths(columns, clean), o.width);
  const line = (cells: string[], color: (c: string, i: number) => string) =>
    columns
      .map((c, i) => {
        const w = widths[i];
        if (w === null) return null;
        const text = clip(cells[i], w);
        const pad = " ".repeat(Math.max(0, w - visibleWidth(text)));
        return color(c.right ? pad + text : text + pad, i);
      })
      .filter((s): s is string => s !== null)
      .join(GAP)
      .replace(/\s+$/, "");
  const out = [
    o.style.dim(
      line(
        columns.map((c) => c.header),
        (s) => s,
      ),
    ),
  ];
  for (const [row, r] of clean.entries()) out.push(line(r, (s, i) => columns[i].color?.(s, row) ?? s));
  return out.map((l) => (Number.isFinite(o.width) ? clip(l, o.width) : l));
}
