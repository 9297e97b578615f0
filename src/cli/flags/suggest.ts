// "Did you mean …?" for argument errors: the known word closest to a typo. Kept apart from args.ts so the
// dispatcher (main.ts) can use it without loading the argument parser or the engine.

/** Edit distance: small words only, so the quadratic table is nothing. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

/** The known word closest to `word`, if it is close enough to be a likely typo. */
export function closest(word: string, known: Iterable<string>): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const k of known) {
    const d = k.startsWith(word) && word.length >= 2 ? 0.5 : distance(word.toLowerCase(), k.toLowerCase());
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best !== null && bestD <= Math.max(1, Math.floor(best.length / 3)) ? best : null;
}

export const didYouMean = (word: string, known: Iterable<string>) => {
  const c = closest(word, known);
  return c ? ` Did you mean ${c}?` : "";
};
