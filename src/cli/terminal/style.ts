// Colours for the CLI: only on a terminal, never with --no-color or NO_COLOR (https://no-color.org).
import pc from "picocolors";
import { plainStyle, type Style } from "../../ui/windows.ts";

export function colorStyle(stream: { isTTY?: boolean }, noColorFlag: boolean | undefined): Style {
  if (noColorFlag || process.env.NO_COLOR || !stream.isTTY) return plainStyle;
  const c = pc.createColors(true);
  return { bold: c.bold, dim: c.dim, red: c.red, green: c.green, yellow: c.yellow, cyan: c.cyan };
}

/** Columns for lines meant for this stream: the terminal's width less one, or unlimited in a pipe. */
export function streamWidth(stream: { isTTY?: boolean; columns?: number }): number {
  return stream.isTTY ? Math.max(20, (stream.columns || 100) - 1) : Infinity;
}
