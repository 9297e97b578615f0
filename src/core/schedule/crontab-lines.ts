// Our lines in the user's crontab: each ends with a `# subagents:NAME` tag, and only a line with that tag is ever
// changed or removed. Everything else in the table (the user's own jobs, comments, blank lines, variables) is
// passed through byte for byte.
export const TAG_PREFIX = "# subagents:";
const TAGGED = /\s# subagents:([a-z0-9][a-z0-9-]*)\s*$/;

/** The schedule name a crontab line is tagged with, or null for a line we did not write. */
export function lineTag(line: string): string | null {
  return TAGGED.exec(line)?.[1] ?? null;
}

/** Quoted for /bin/sh, and `%` escaped: cron turns a bare `%` into a line break of the command's stdin. */
export function cronQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`).replace(/%/g, "\\%")}'`;
}

export type CronLine = {
  name: string;
  cron: string;
  /** The executable that runs `schedule run NAME --from-cron` (absolute: cron's PATH is /usr/bin:/bin). */
  command: string[];
  /** What the line sets before the command: where the definition and the database are (nothing secret). */
  env: Record<string, string>;
  /** Where what the command prints goes (cron would mail it, or drop it where no mailer is set up). */
  log: string;
};

/** A line break, carriage return or NUL in any part would end the crontab line there and start another: a job of
 *  its own that cron runs. Such a value never reaches the table (other control characters neither). */
const LINE_BREAKING = /[\u0000-\u001f\u007f]/;

/** Why this line cannot be written into a crontab (naming the part, never its value), or null. */
export function lineProblem(l: CronLine): string | null {
  const parts: [string, string][] = [
    ["the schedule name", l.name],
    ["--cron", l.cron],
    ["the log path", l.log],
    ...l.command.map((c): [string, string] => ["the executable's path", c]),
    ...Object.entries(l.env).flatMap(([k, v]): [string, string][] => [
      ["a variable name", k],
      [k, v],
    ]),
  ];
  for (const [what, value] of parts)
    if (LINE_BREAKING.test(value))
      return `${what} holds a line break or another control character, which would end the crontab line and start a job of its own`;
  return null;
}

export function renderLine(l: CronLine): string {
  const problem = lineProblem(l);
  if (problem) throw new Error(`not written to the crontab: ${problem}`);
  return formatLine(l);
}

/** The line as `add` writes it — unchecked: `rm` renders an existing schedule's line again to find it. */
export function formatLine(l: CronLine): string {
  const env = Object.entries(l.env).map(([k, v]) => `${k}=${cronQuote(v)}`);
  const cmd = [...l.command.map(cronQuote), "schedule", "run", l.name, "--from-cron"];
  return `${l.cron} ${[...env, ...cmd].join(" ")} >>${cronQuote(l.log)} 2>&1 ${TAG_PREFIX}${l.name}`;
}

/** The table's lines (a final newline does not make an empty last line). */
function lines(table: string): string[] {
  if (!table) return [];
  const all = table.split("\n");
  if (all.at(-1) === "") all.pop();
  return all;
}

const join = (ls: string[]) => (ls.length ? `${ls.join("\n")}\n` : "");

/** Our lines, by name. */
export function ourLines(table: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const l of lines(table)) {
    const name = lineTag(l);
    if (name) out.set(name, l);
  }
  return out;
}

/** The table with NAME's line set to `line` (replacing the old one in place, else added at the end). */
export function withLine(table: string, name: string, line: string): string {
  const ls = lines(table);
  const at = ls.findIndex((l) => lineTag(l) === name);
  if (at < 0) return join([...ls, line]);
  return join([...ls.slice(0, at), line, ...ls.slice(at + 1).filter((l) => lineTag(l) !== name)]);
}

/**
 * The table without NAME's line (every other line as it was). `written` is the line `add` wrote, rendered again
 * from the schedule's definition: when an older version let a line break into it, the table holds it as several
 * lines — the tagged last one and untagged ones before it — and every one of them goes.
 */
export function withoutLine(table: string, name: string, written?: string): string {
  const ls = lines(table);
  const drop = new Set<number>();
  ls.forEach((l, i) => {
    if (lineTag(l) === name) drop.add(i);
  });
  const parts = written?.split("\n") ?? [];
  if (parts.length > 1)
    for (let i = 0; i + parts.length <= ls.length; i++)
      if (parts.every((p, j) => ls[i + j] === p)) for (let j = 0; j < parts.length; j++) drop.add(i + j);
  if (!drop.size) return table;
  return join(ls.filter((_, i) => !drop.has(i)));
}
