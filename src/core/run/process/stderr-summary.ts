// What a failed child's stderr says, in a few lines a user can act on. A crashing pi prints the provider's
// message or the exception first and a long stack (or unrelated noise) after it, so "the last 3 lines" is
// usually a stack frame. Keep the first exception line, lines that read like a provider's or API's message,
// and the last lines; bounded whatever the child printed.

/** How much of the start of stderr the runner keeps next to its tail, so the first exception line survives. */
export const STDERR_HEAD_CHARS = 4096;
const MAX_CHARS = 1500;
const LINE_CHARS = 300;
const LAST_LINES = 4;

const FRAME = /^\s*at\s|^\s*File "|^\s+\^+\s*$/;
const EXCEPTION = /^(?:Uncaught\s+)?(?:[A-Z]\w*)?(?:Error|Exception)\b|^(?:fatal|panic|error)\b/i;
const MESSAGE =
  /\b(?:error|failed|invalid|unauthori[sz]ed|forbidden|denied|not found|api key|credentials?|quota|rate limit|overloaded|status (?:code )?[45]\d\d|[45]\d\d\s)/i;

const clipLine = (l: string) => (l.length > LINE_CHARS ? `${l.slice(0, LINE_CHARS - 1)}…` : l);

/**
 * `head` is the first STDERR_HEAD_CHARS of stderr, `tail` its last part; `whole` says the tail holds all of it.
 * Returns "" for empty stderr.
 */
export function stderrSummary(head: string, tail: string, whole: boolean): string {
  const split = (t: string) =>
    t
      .split(/\r?\n/)
      .map((l) => l.trimEnd())
      .filter((l) => l.trim());
  const tailLines = split(tail);
  const headLines = whole ? tailLines : split(head);
  const all = whole ? tailLines : [...headLines, ...tailLines];
  if (!all.length) return "";
  const picked: string[] = [];
  const add = (l: string | undefined) => {
    if (l !== undefined && !picked.includes(l)) picked.push(l);
  };
  add(all.find((l) => EXCEPTION.test(l.trim()) && !FRAME.test(l)));
  for (const l of all.filter((x) => MESSAGE.test(x) && !FRAME.test(x)).slice(0, 3)) add(l);
  const last = tailLines.filter((l) => !FRAME.test(l)).slice(-LAST_LINES);
  const skipped =
    picked.length &&
    last.length &&
    !picked.includes(last[0]) &&
    all.indexOf(last[0]) > all.indexOf(picked[picked.length - 1]) + 1;
  if (skipped) picked.push("…");
  for (const l of last.length ? last : tailLines.slice(-LAST_LINES)) add(l);
  let out = picked.map(clipLine).join("\n");
  if (out.length > MAX_CHARS) out = `${out.slice(0, MAX_CHARS - 1)}…`;
  return out;
}
