// Thin wrapper over node:util parseArgs that turns its exceptions into UsageErrors with our wording: every
// argument error names the command, suggests the closest known word, and points at `subagents help CMD`.
import { DEFAULT_AGENT } from "../../core/run/task-types.ts";
import * as path from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { profileRefusal } from "../../core/run/task-error.ts";
import type { Engine } from "../../core/run/engine.ts";
import { folderProblem } from "../../host/fs-parts.ts";
import { UsageError } from "../errors.ts";
import { InputError, isolationValue } from "../../core/task-fields.ts";
import { didYouMean } from "./suggest.ts";
import { decimal } from "../../core/decimal.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

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
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: typeof all; allowPositionals: true; strict: true }>
  >;
  try {
    parsed = parseArgs({ args: joinNegativeValues(argv, all), options: all, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(
      `${command}: ${argumentProblem((err as Error).message, all)} See 'subagents help ${command}'.`,
    );
  }
  // `--gate ''` (an unset variable, a quoting slip) would otherwise mean "no gate" without a word: no flag takes "".
  for (const [name, v] of Object.entries(parsed.values as Record<string, unknown>))
    if ([v].flat().some((x) => typeof x === "string" && x.trim() === ""))
      throw new UsageError(`${command}: --${name} needs a value (got an empty one). See 'subagents help ${command}'.`);
  return parsed;
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

export const AGE_UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** "30d" → milliseconds (`--older-than`, `--since`). */
export function parseAge(command: string, flag: string, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)([mhdw])$/.exec(raw.trim());
  if (!m || Number(m[1]) <= 0)
    throw new UsageError(`${command}: --${flag} must look like 30d, 12h, 90m or 2w (got "${raw}").`);
  return Number(m[1]) * AGE_UNITS[m[2]];
}

export function positiveNumber(command: string, flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = decimal(raw);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(`${command}: --${flag} must be a positive number (got "${raw}").`);
  return n;
}

/** `--isolation worktree`, the only mode. */
export function isolationFlag(command: string, raw: string | undefined): "worktree" | undefined {
  try {
    return isolationValue("--isolation", raw);
  } catch (err) {
    if (err instanceof InputError) throw new UsageError(`${command}: ${err.message}.`);
    throw err;
  }
}

/** The command's working folder (--cwd, else the shell's), resolved; a usage error when it cannot be one. */
export function workingFolder(command: string, cwd: string | undefined): string {
  const dir = path.resolve(cwd ?? process.cwd());
  const problem = folderProblem(dir);
  if (problem) throw new UsageError(`${command}: the working folder ${problem}.`);
  // As written: the call resolves it to its real path, and says both when it refuses it (core/call/folders.ts).
  return dir;
}

/** Fails when a command that takes no arguments got some. */
export function noPositionals(command: string, positionals: string[]): void {
  if (positionals.length)
    throw new UsageError(`${command}: unexpected argument "${positionals[0]}". See 'subagents help ${command}'.`);
}

/**
 * A profile named on the command line must be usable ("default" is pi's defaults): exit 2 before anything
 * starts. A refused profile file says why; an unknown name gets a suggestion and the full list.
 */
export function requireProfile(
  command: string,
  name: string,
  engine: Pick<Engine, "profiles" | "profileProblems">,
): void {
  if (name === DEFAULT_AGENT || engine.profiles.has(name)) return;
  const refusal = profileRefusal(engine, name);
  if (refusal.code !== "UNKNOWN_AGENT") throw new UsageError(`${command}: ${refusal.message}`);
  const names = [DEFAULT_AGENT, ...[...engine.profiles.keys()].sort()];
  throw new UsageError(
    `${command}: Unknown profile: "${name}".${didYouMean(name, names)} Available profiles: ${names.join(", ")}`,
  );
}
