// One-line descriptions of what a child is doing, for the rolling windows (docs/cli.md "What it looks like").
// Tool calls are condensed: `ls → src/`, `find → *.ts in src/`, `bash → npm test`; ls/find results become counts.

/** A tool call's JSON arguments as an object ({} when they are not one). */
export function parseToolArgs(args: string): Record<string, unknown> {
  try {
    const v = JSON.parse(args) as unknown;
    return v && typeof v === "object" ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const oneLine = (s: string, max = 160) => {
  const flat = s.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export function toolCallLine(name: string, args: string): string {
  const a = parseToolArgs(args);
  const str = (k: string) => (typeof a[k] === "string" ? (a[k] as string) : "");
  switch (name) {
    case "ls":
      return `ls → ${str("path") || "."}`;
    case "find":
      return `find → ${str("pattern") || "*"}${str("path") ? ` in ${str("path")}` : ""}`;
    case "grep":
      return `grep → ${str("pattern")}${str("path") ? ` in ${str("path")}` : ""}`;
    case "read":
    case "write":
    case "edit":
      return `${name} → ${str("path") || str("file_path")}`;
    case "bash":
      return `bash → ${oneLine(str("command"), 140)}`;
    case "subagent_finalize":
      return `finalize → ${str("status")}`;
    default:
      return `${name} → ${oneLine(args === "{}" ? "" : args, 140)}`;
  }
}

/** A short summary of a tool result, or null when the call line says enough. */
export function toolResultLine(name: string, result: string, isError: boolean): string | null {
  if (isError) return `  ✗ ${oneLine(result, 150) || "failed"}`;
  const truncated = /\[.*(truncated|limit reached).*\]|…\(\+\d+\)$/i.test(result);
  const plus = truncated ? "+" : "";
  if (name === "ls") {
    const entries = result.split("\n").filter((l) => l.trim() && !l.startsWith("["));
    if (!entries.length) return "  (empty)";
    const dirs = entries.filter((l) => l.trim().endsWith("/")).length;
    const files = entries.length - dirs;
    return `  ${files} file${files === 1 ? "" : "s"}, ${dirs} dir${dirs === 1 ? "" : "s"}${plus}`;
  }
  if (name === "find") {
    const matches = result
      .split("\n")
      .filter((l) => l.trim() && !l.startsWith("[") && !/^no files found/i.test(l.trim())).length;
    return `  ${matches} match${matches === 1 ? "" : "es"}${plus}`;
  }
  return null;
}

export function textLines(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.length > 0);
}

/** One of pi's retries of a failed model request, as a run's activity records it (windows show it as
 *  `↻ retry 2/3 in 4s — …`, ui/windows.ts displayLines). */
export const retryLine = (ev: { attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }) =>
  `↻ retry ${ev.attempt}/${ev.maxAttempts} in ${Math.round(ev.delayMs / 1000)}s: ${ev.errorMessage}`;

/** A provider's "slow down", as windows and logs show it. */
export function rateLimitLine(status: number, retryAfterMs?: number): string {
  return `⏸ rate limited (${status})${retryAfterMs !== undefined ? `: retry after ${Math.ceil(retryAfterMs / 1000)}s` : ""}`;
}
