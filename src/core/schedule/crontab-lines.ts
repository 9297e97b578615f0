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

export function renderLine(l: CronLine): string {
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

/** The table without NAME's line (every other line as it was). */
export function withoutLine(table: string, name: string): string {
  const ls = lines(table);
  if (!ls.some((l) => lineTag(l) === name)) return table;
  return join(ls.filter((l) => lineTag(l) !== name));
}
