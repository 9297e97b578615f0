// Checks a cron expression before it goes into the crontab: cron itself would take a bad line and never say so
// (it logs to syslog, if anywhere). Five fields (minute hour day-of-month month day-of-week), each a list of
// `*`, `N`, `N-M`, optionally `/STEP`; months and weekdays may be names; or one of cron's @-words.
const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  {
    name: "month",
    min: 1,
    max: 12,
    names: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
  },
  { name: "day of week", min: 0, max: 7, names: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] },
] as const;

/** @reboot is left out: a schedule runs on a clock, and a run at boot has no one's folder mounted or session up. */
export const CRON_WORDS = ["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"];

type Field = (typeof FIELDS)[number];

function value(field: Field, text: string): number | null {
  if (/^\d+$/.test(text)) return Number(text);
  const names: readonly string[] | undefined = "names" in field ? field.names : undefined;
  const i = names?.indexOf(text.toLowerCase()) ?? -1;
  return i < 0 ? null : i + field.min;
}

function fieldProblem(field: Field, text: string): string | null {
  const range = `${field.min}–${field.max}`;
  for (const part of text.split(",")) {
    const m = /^([^/]+)(?:\/(\d+))?$/.exec(part);
    if (!m) return `${field.name} "${part}" is not *, N, N-M or one of these with /STEP`;
    const [, base, step] = m;
    if (step !== undefined && Number(step) < 1) return `${field.name} "${part}": the step must be at least 1`;
    if (base === "*") continue;
    const [from, to, extra] = base.split("-");
    if (extra !== undefined) return `${field.name} "${part}" has more than one "-"`;
    const a = value(field, from);
    const b = to === undefined ? a : value(field, to);
    if (a === null || b === null)
      return `${field.name} "${part}" is not a number${"names" in field ? " or a name" : ""}`;
    if (a < field.min || a > field.max || b < field.min || b > field.max)
      return `${field.name} "${part}" is out of range ${range}`;
    if (b < a) return `${field.name} "${part}" runs backwards`;
  }
  return null;
}

/** Why the expression is not one cron runs as meant, or null. */
export function cronProblem(expr: string): string | null {
  const text = expr.trim();
  if (!text) return "the cron expression is empty";
  if (text.startsWith("@"))
    return CRON_WORDS.includes(text.toLowerCase()) ? null : `"${text}" is not one of ${CRON_WORDS.join(", ")}`;
  // A "%" is a line break to cron, and a newline would start a second crontab line.
  if (/[%\n\r#]/.test(text)) return `the cron expression may not contain "%", "#" or a line break`;
  const parts = text.split(/\s+/);
  if (parts.length !== 5)
    return `a cron expression has 5 fields (minute hour day-of-month month day-of-week); "${text}" has ${parts.length}`;
  for (let i = 0; i < 5; i++) {
    const problem = fieldProblem(FIELDS[i], parts[i]);
    if (problem) return problem;
  }
  return null;
}

/** The expression as it goes into the crontab (fields separated by one space). */
export const normalCron = (expr: string) => expr.trim().split(/\s+/).join(" ");
