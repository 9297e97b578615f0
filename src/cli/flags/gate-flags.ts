// `--gate CMD`, `--gate-timeout S` and `--gate-retries N` (an acceptance check for the tasks) for `delegate` and
// `run`: read here so both commands take them, and word their errors, alike.
import { positiveNumber } from "./args.ts";
import { UsageError } from "../errors.ts";
import { decimal } from "../../core/decimal.ts";

export type GateFlags = { gate?: string; gateTimeout?: number; gateRetries?: number };

export function gateFlags(command: string, values: Record<string, unknown>): GateFlags {
  const flags: GateFlags = {};
  if (typeof values.gate === "string") flags.gate = values.gate;
  const timeout = positiveNumber(command, "gate-timeout", values["gate-timeout"] as string | undefined);
  if (timeout !== undefined) flags.gateTimeout = timeout;
  const retries = values["gate-retries"] as string | undefined;
  if (retries !== undefined) {
    const n = decimal(retries);
    if (!Number.isInteger(n) || n < 0)
      throw new UsageError(`${command}: --gate-retries must be a whole number ≥ 0 (got "${retries}").`);
    flags.gateRetries = n;
  }
  return flags;
}
