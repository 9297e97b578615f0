// Thin wrapper over node:util parseArgs that turns its exceptions into UsageErrors with our wording: every
// argument error names the command, suggests the closest known word, and points at `subagents help CMD`.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./errors.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Edit distance, for "did you mean": small words only, so the quadratic table is nothing. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
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

/** `--timeout -5` is a value, not an option: parseArgs would call it ambiguous, so it is joined as `--timeout=-5`. */
function joinNegativeValues(argv: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].startsWith("--") ? argv[i].slice(2) : null;
    if (name && options[name]?.type === "string" && /^-\d/.test(argv[i + 1] ?? "")) out.push(`${argv[i]}=${argv[++i]}`);
    else out.push(argv[i]);
  }
  return out;
}

export function parse<O extends Options>(command: string, argv: string[], options: O) {
  const all = { ...options, help: { type: "boolean", short: "h" } } as O & { help: { type: "boolean"; short: "h" } };
  try {
    return parseArgs({ args: joinNegativeValues(argv, all), options: all, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${command}: ${argumentProblem((err as Error).message, all)} See 'subagents help ${command}'.`);
  }
}

function argumentProblem(raw: string, options: Options): string {
  const flags = Object.entries(options).flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]);
  const unknown = /Unknown option '([^']+)'/.exec(raw);
  if (unknown) return `unknown option ${unknown[1]}.${didYouMean(unknown[1], flags)}`;
  const missing = /Option '(?:-\w, )?(--[\w-]+) <value>' argument missing/.exec(raw);
  if (missing) return `${missing[1]} needs a value.`;
  const noValue = /Option '(--[\w-]+)' does not take an argument/.exec(raw);
  if (noValue) return `${noValue[1]} takes no value.`;
  return `${raw.replace(/\. To specify a positional argument starting with a '-'.*$/s, "")}.`;
}

export function positiveNumber(command: string, flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${command}: --${flag} must be a positive number (got "${raw}").`);
  return n;
}

/** Fails when a command that takes no arguments got some. */
export function noPositionals(command: string, positionals: string[]): void {
  if (positionals.length) throw new UsageError(`${command}: unexpected argument "${positionals[0]}". See 'subagents help ${command}'.`);
}

/** A profile named on the command line must exist ("default" is pi's defaults): exit 2 before anything starts. */
export function requireProfile(command: string, name: string, profiles: Map<string, unknown>): void {
  if (name === "default" || profiles.has(name)) return;
  const names = ["default", ...[...profiles.keys()].sort()];
  throw new UsageError(`${command}: Unknown profile: "${name}".${didYouMean(name, names)} Available profiles: ${names.join(", ")}`);
}
