// Spend budgets of one task (turns, tokens, dollars) and of a whole delegate call (dollars). Pure: the runner
// asks `budgetHit` after each model turn, windows show `budgetLabel`, inputs are read with `budgetValue`.
import type { Usage } from "./types.ts";
import { decimal } from "./decimal.ts";

export type Budget = { maxTurns?: number; maxTokens?: number; maxCost?: number };
export type BudgetKey = keyof Budget;
export const BUDGET_KEYS: BudgetKey[] = ["maxTurns", "maxTokens", "maxCost"];

/** A budget that was reached: which one, its limit and what was spent. `call` = the delegate call's maxCost. */
export type BudgetHit = { key: BudgetKey; limit: number; spent: number; call?: boolean };

/** Tokens as providers bill them: everything read and written, cache included. */
export const tokensOf = (u: Usage) => u.input + u.output + u.cacheRead + u.cacheWrite;

const spentOn = (key: BudgetKey, u: Usage) =>
  key === "maxTurns" ? u.turns : key === "maxTokens" ? tokensOf(u) : u.cost;

export function budgetHit(b: Budget | undefined, u: Usage): BudgetHit | null {
  for (const key of BUDGET_KEYS) {
    const limit = b?.[key];
    if (limit !== undefined && spentOn(key, u) >= limit) return { key, limit, spent: spentOn(key, u) };
  }
  return null;
}

export const hasBudget = (b: Budget | undefined) => !!b && BUDGET_KEYS.some((k) => b[k] !== undefined);

const money = (n: number) => `$${n < 1 ? n.toFixed(4).replace(/0{1,2}$/, "") : n.toFixed(2)}`;
const tokens = (n: number) => (n >= 10_000 ? `${Math.round(n / 1000)}k` : String(n));

/** One budget as "spent/limit": `turns 3/5`, `tokens 12k/50k`, `$0.12/$0.50`. */
function pair(key: BudgetKey, spent: number, limit: number): string {
  if (key === "maxTurns") return `turns ${spent}/${limit}`;
  if (key === "maxTokens") return `tokens ${tokens(spent)}/${tokens(limit)}`;
  return `${money(spent)}/${money(limit)}`;
}

/** Spend against every budget set, for a window header; "" without budgets. */
export function budgetLabel(b: Budget | undefined, u: Usage): string {
  return BUDGET_KEYS.filter((k) => b?.[k] !== undefined)
    .map((k) => pair(k, spentOn(k, u), b![k]!))
    .join(" ");
}

/** The limits alone, as written: "maxTurns 30, maxCost $1.50" (profiles listing). */
export function budgetLimits(b: Budget): string {
  return BUDGET_KEYS.filter((k) => b[k] !== undefined)
    .map((k) => `${k} ${k === "maxCost" ? money(b[k]!) : b[k]}`)
    .join(", ");
}

export function budgetMessage(hit: BudgetHit): string {
  const what = hit.call ? "the call's maxCost" : hit.key;
  return `Budget exceeded: ${what} (${pair(hit.key, hit.spent, hit.limit)})`;
}

/** The one message a child gets when a budget is reached (delivered as a steer at the next turn boundary). */
export function wrapUpText(hit: BudgetHit): string {
  const what = hit.call ? "the delegate call's cost budget" : `your ${hit.key} budget`;
  return (
    `You have reached ${what} (${pair(hit.key, hit.spent, hit.limit)}). Stop working now: do not call any more tools ` +
    "except to report. Finalize with what you have (call subagent_finalize if you have it, else answer in plain text), " +
    "saying what is done and what is left."
  );
}

/** Reads one budget field (task input, front matter, CLI flag): a positive number, whole for turns/tokens. */
export function budgetValue(key: BudgetKey, v: unknown): number | string {
  const n = typeof v === "string" ? decimal(v) : v;
  const whole = key !== "maxCost";
  const ok = typeof n === "number" && Number.isFinite(n) && n > 0 && (!whole || Number.isInteger(n));
  return ok ? n : `${key} must be a positive ${whole ? "whole " : ""}number (got ${JSON.stringify(v)?.slice(0, 40)})`;
}

/** Task's own fields win over its profile's, key by key. */
export function mergeBudgets(...layers: (Budget | undefined)[]): Budget {
  const out: Budget = {};
  for (const key of BUDGET_KEYS) {
    const v = layers.find((l) => l?.[key] !== undefined)?.[key];
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/** The dollars spent by every task of one delegate call, against its maxCost. Shared by the call's tasks. */
export class CallSpend {
  private readonly byTask = new Map<string, number>();
  /** `ended`: what tasks no longer listed spent (a batch job's earlier runs, its ended items). */
  constructor(
    readonly maxCost: number,
    private ended = 0,
  ) {}

  set(task: string, cost: number): void {
    this.byTask.set(task, cost);
  }

  /** A task ended: its spend stays counted, the task is no longer kept (a stream of tasks stays small). */
  settle(task: string): void {
    this.ended += this.byTask.get(task) ?? 0;
    this.byTask.delete(task);
  }

  get spent(): number {
    let sum = this.ended;
    for (const c of this.byTask.values()) sum += c;
    return sum;
  }

  hit(): BudgetHit | null {
    const spent = this.spent;
    return spent >= this.maxCost ? { key: "maxCost", limit: this.maxCost, spent, call: true } : null;
  }
}
