// Colours for the CLI: only on a terminal, never with --no-color or NO_COLOR (https://no-color.org).
import pc from "picocolors";
import { printable } from "../../core/sanitize.ts";
import { plainStyle, type Style } from "../../ui/windows.ts";

export function colorStyle(stream: { isTTY?: boolean }, noColorFlag: boolean | undefined): Style {
  if (noColorFlag || process.env.NO_COLOR || !stream.isTTY) return plainStyle;
  const c = pc.createColors(true);
  return { bold: c.bold, dim: c.dim, red: c.red, green: c.green, yellow: c.yellow, cyan: c.cyan };
}

/** A child's whole text as a command's result (`run`, `output`): neutralised on a terminal (core/sanitize.ts
 *  printable), its bytes as they are when redirected (`subagents output ID > result.md`) — what reads it then is a
 *  program, like --json's reader. */
export function resultText(stream: { isTTY?: boolean }, text: string): string {
  const t = stream.isTTY ? printable(text) : text;
  return t.endsWith("\n") ? t : `${t}\n`;
}

/** Columns for lines meant for this stream: the terminal's width less one, or unlimited in a pipe. */
export function streamWidth(stream: { isTTY?: boolean; columns?: number }): number {
  return stream.isTTY ? Math.max(20, (stream.columns || 100) - 1) : Infinity;
}
