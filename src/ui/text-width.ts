// Display width of terminal text (ANSI escapes take no room, wide CJK/emoji take two) and clipping to a width.
import { eastAsianWidth } from "get-east-asian-width";
import { printable } from "../core/sanitize.ts";

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*(?:\x07|\x1b\\)/y;

function charWidth(cp: number): number {
  if (cp < 32 || (cp >= 0x7f && cp < 0xa0)) return 0;
  // Combining marks and zero-width joiners/selectors draw nothing on their own.
  if ((cp >= 0x300 && cp <= 0x36f) || cp === 0x200d || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0;
  return eastAsianWidth(cp, { ambiguousAsWide: false });
}

export function visibleWidth(s: string): number {
  let w = 0;
  for (let i = 0; i < s.length; ) {
    if (s.charCodeAt(i) === 0x1b) {
      ANSI.lastIndex = i;
      if (ANSI.exec(s)) {
        i = ANSI.lastIndex;
        continue;
      }
    }
    const cp = s.codePointAt(i)!;
    w += charWidth(cp);
    i += cp > 0xffff ? 2 : 1;
  }
  return w;
}

/** Cuts s to at most `width` columns, ending with `…` when cut; escape sequences are kept, and reset at the end. */
export function clip(s: string, width: number): string {
  if (width <= 0) return "";
  if (visibleWidth(s) <= width) return s;
  let out = "";
  let w = 0;
  let sawAnsi = false;
  for (let i = 0; i < s.length; ) {
    if (s.charCodeAt(i) === 0x1b) {
      ANSI.lastIndex = i;
      if (ANSI.exec(s)) {
        out += s.slice(i, ANSI.lastIndex);
        sawAnsi = true;
        i = ANSI.lastIndex;
        continue;
      }
    }
    const cp = s.codePointAt(i)!;
    const cw = charWidth(cp);
    if (w + cw > width - 1) break;
    out += String.fromCodePoint(cp);
    w += cw;
    i += cp > 0xffff ? 2 : 1;
  }
  return `${out}…${sawAnsi ? "\x1b[0m" : ""}`;
}

/** One line of a child's text, safe in a frame: its escape sequences and controls made harmless (printable), a tab
 *  two spaces, line breaks gone — so it can neither move our cursor nor break the frame. */
export function sanitizeLine(s: string): string {
  return printable(s).replace(/\t/g, "  ").replace(/\n/g, "");
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
