// Bounding text we hand back: head + tail with a marker in between (the start says what was asked, the end
// says how it finished), hard byte caps, and a rolling tail buffer for stderr.

export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Longest prefix of s within maxBytes of UTF-8, never splitting a character or surrogate pair. */
export function headBytes(s: string, maxBytes: number): string {
  if (maxBytes <= 0) return "";
  let n = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length;
    const w = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (n + w > maxBytes) break;
    n += w;
    i += pair ? 2 : 1;
  }
  return s.slice(0, i);
}

/** Longest suffix of s within maxBytes of UTF-8, never splitting a character or surrogate pair. */
export function tailBytes(s: string, maxBytes: number): string {
  if (maxBytes <= 0) return "";
  let n = 0;
  let i = s.length;
  while (i > 0) {
    const c = s.charCodeAt(i - 1);
    const pair =
      c >= 0xdc00 && c <= 0xdfff && i - 2 >= 0 && s.charCodeAt(i - 2) >= 0xd800 && s.charCodeAt(i - 2) <= 0xdbff;
    const w = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (n + w > maxBytes) break;
    n += w;
    i -= pair ? 2 : 1;
  }
  return s.slice(i);
}

export type Truncated = { text: string; truncated: boolean; omittedLines: number; omittedBytes: number };

export function truncateHeadTail(text: string, opts: { maxBytes: number; maxLines: number; hint?: string }): Truncated {
  const bytes = utf8Length(text);
  const lines = text.split("\n");
  if (bytes <= opts.maxBytes && lines.length <= opts.maxLines)
    return { text, truncated: false, omittedLines: 0, omittedBytes: 0 };
  const headLineCount = Math.max(1, Math.ceil(opts.maxLines / 2));
  const tailLineCount = Math.max(1, opts.maxLines - headLineCount);
  const half = Math.max(1, Math.floor(opts.maxBytes / 2));
  let head = headBytes(lines.slice(0, headLineCount).join("\n"), half);
  let tail = tailBytes(lines.slice(Math.max(headLineCount, lines.length - tailLineCount)).join("\n"), half);
  if (lines.length <= headLineCount) tail = tailBytes(text.slice(head.length), half);
  // When the head already covers the text's start and the tail its end, they may overlap: keep them apart.
  if (head.length + tail.length > text.length) tail = text.slice(head.length);
  head = head.replace(/\n$/, "");
  const omittedBytes = Math.max(0, bytes - utf8Length(head) - utf8Length(tail));
  const omittedLines = Math.max(0, lines.length - head.split("\n").length - tail.split("\n").length);
  const kb = (omittedBytes / 1024).toFixed(omittedBytes < 10240 ? 1 : 0);
  // A cut inside one long line drops no whole line: say only how much was cut.
  const what = omittedLines ? `${omittedLines} lines / ${kb} KB` : `${kb} KB`;
  const marker = `… [${what} omitted${opts.hint ? ` — ${opts.hint}` : ""}] …`;
  return { text: `${head}\n${marker}\n${tail}`, truncated: true, omittedLines, omittedBytes };
}

/** Splits `total` bytes between texts of the given sizes: each gets what it needs up to an even share of what is
 *  left, so the short ones' room goes to the long ones; none gets less than `min` (a head and a tail to read). */
export function shareBytes(sizes: number[], total: number, min = 0): number[] {
  const shares = sizes.map(() => 0);
  let left = Math.max(0, total);
  const order = sizes.map((size, i) => ({ size, i })).sort((a, b) => a.size - b.size);
  order.forEach(({ size, i }, k) => {
    const even = Math.floor(left / (order.length - k));
    shares[i] = Math.min(size, Math.max(min, even));
    left = Math.max(0, left - shares[i]);
  });
  return shares;
}

/** Keeps only the last `max` bytes of what was appended (for stderr tails), in amortized O(1) per append. */
export class TailBuffer {
  private parts: string[] = [];
  private bytes = 0;
  private dropped = false;

  constructor(private readonly max: number) {}

  append(chunk: string): void {
    if (!chunk) return;
    this.parts.push(chunk);
    this.bytes += utf8Length(chunk);
    if (this.bytes > this.max * 2) this.compact();
  }

  private compact(): void {
    const joined = tailBytes(this.parts.join(""), this.max);
    this.parts = [joined];
    this.bytes = utf8Length(joined);
    this.dropped = true;
  }

  toString(): string {
    const all = this.parts.join("");
    if (this.bytes <= this.max) return this.dropped ? `…${all}` : all;
    return `…${tailBytes(all, this.max)}`;
  }
}
