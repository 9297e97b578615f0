// The rows `subagents profiles` prints: one line per profile in columns that fit the terminal, widest flexible
// columns shrinking first, every line clipped to the width.
import { clip, visibleWidth } from "../ui/text-width.ts";

export type Column = { title: string; min: number; flex: boolean };

/** Pads/clips cells into lines no wider than `width` (header row first). */
export function formatTable(columns: Column[], rows: string[][], width: number): string[] {
  const gap = 2;
  const widths = columns.map((c, i) => Math.max(visibleWidth(c.title), ...rows.map((r) => visibleWidth(r[i] ?? ""))));
  const total = () => widths.reduce((a, b) => a + b, 0) + gap * (columns.length - 1);
  // Shrink the widest flexible column one step at a time until the table fits (or nothing can shrink).
  while (total() > width) {
    let widest = -1;
    columns.forEach((c, i) => {
      if (c.flex && widths[i] > c.min && (widest < 0 || widths[i] > widths[widest])) widest = i;
    });
    if (widest < 0) break;
    widths[widest]--;
  }
  const line = (cells: string[]) =>
    clip(
      cells
        .map((cell, i) => {
          const c = clip(cell, widths[i]);
          return i === cells.length - 1 ? c : c + " ".repeat(Math.max(0, widths[i] - visibleWidth(c)));
        })
        .join(" ".repeat(gap))
        .trimEnd(),
      width,
    );
  return [line(columns.map((c) => c.title)), ...rows.map(line)];
}

/** Splits text into lines of at most `width` columns at spaces (long words are cut), indenting continuations. */
export function wrap(text: string, width: number, indent = "    "): string[] {
  const out: string[] = [];
  let cur = /^\s*/.exec(text)![0];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const next = cur.trim() ? `${cur} ${word}` : `${cur}${word}`;
    if (visibleWidth(next) <= width || !cur.trim()) cur = next;
    else {
      out.push(cur);
      cur = `${indent}${word}`;
    }
  }
  if (cur.trim()) out.push(cur);
  return out.map((l) => clip(l, width));
}
