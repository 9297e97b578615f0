// `--max-turns`, `--max-tokens`, `--max-cost` (per task) for `delegate` and `run`; `--max-total-cost` for a
// whole delegate call. Read here so both commands word their errors alike.
import { budgetValue, type Budget, type BudgetKey } from "../../core/budget.ts";
import { UsageError } from "../errors.ts";

const FLAGS: [string, BudgetKey][] = [
  ["max-turns", "maxTurns"],
  ["max-tokens", "maxTokens"],
  ["max-cost", "maxCost"],
];

function value(command: string, flag: string, key: BudgetKey, raw: string): number {
  const v = budgetValue(key, raw);
  if (typeof v === "string") throw new UsageError(`${command}: --${flag} ${v.replace(`${key} must`, "must")}.`);
  return v;
}

export function budgetFlags(command: string, values: Record<string, unknown>): Budget | undefined {
  const budget: Budget = {};
  for (const [flag, key] of FLAGS)
    if (typeof values[flag] === "string") budget[key] = value(command, flag, key, values[flag] as string);
  return Object.keys(budget).length ? budget : undefined;
}

export function totalCostFlag(command: string, raw: string | undefined): number | undefined {
  return raw === undefined ? undefined : value(command, "max-total-cost", "maxCost", raw);
}
