// Thin wrapper over node:util parseArgs that turns its exceptions into UsageErrors with our wording.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./errors.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

export function parse<O extends Options>(command: string, argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: "boolean", short: "h" } }, allowPositionals: true, strict: true });
  } catch (err) {
    const msg = (err as Error).message.replace(/\. To specify a positional argument starting with a '-'.*$/s, "");
    throw new UsageError(`${command}: ${msg}. See 'subagents ${command} --help'.`);
  }
}

export function positiveNumber(command: string, flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${command}: --${flag} must be a positive number (got "${raw}").`);
  return n;
}
