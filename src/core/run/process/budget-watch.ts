// Enforces a task's budgets (and its call's maxCost) on one child, turn by turn: the first model turn that
// reaches a budget and still asks for work gets one "wrap up" steer; a turn that again asks for work after the
// steer reached the model (the child reports it `steered`) is stopped with BUDGET_EXCEEDED. A turn that ends in
// text or only finalizes is the child wrapping up: let it. The steer can land a turn late (the child may already
// be in its next request when the line arrives), so until it is delivered the child gets at most
// UNDELIVERED_TURNS more turns.
import { budgetHit, budgetMessage, wrapUpText, type Budget, type BudgetHit, type CallSpend } from "../../budget.ts";
import { addUsage, emptyUsage, type Usage } from "../../types.ts";

export type BudgetAction = { steer: string } | { stop: { code: "BUDGET_EXCEEDED"; message: string } } | null;

export type BudgetWatch = {
  /** After each assistant message. `canSteer`: the child has a control pipe (else the first hit stops it). */
  onTurn(usage: Usage, asksForWork: boolean, canSteer: boolean): BudgetAction;
  /** The wrap-up steer reached the model after `turns` turns (the child's `steered` event). */
  onWrapUpDelivered(turns: number): void;
  /** The budget reached, if any (a child that wrapped up in time still says so in its result). */
  readonly reached: BudgetHit | null;
};

/** Turns a child may take after the wrap-up steer was sent while it has not reached the model yet. */
const UNDELIVERED_TURNS = 2;

/** `before`: what earlier attempts of the same task spent (a fallback model goes on within the same budget). */
export function budgetWatch(
  budget: Budget | undefined,
  call: { spend: CallSpend; key: string } | undefined,
  before: Usage = emptyUsage(),
): BudgetWatch {
  let warnedAt: number | null = null;
  let deliveredAt: number | null = null;
  let reached: BudgetHit | null = null;
  return {
    get reached() {
      return reached;
    },
    onWrapUpDelivered(turns) {
      if (warnedAt !== null) deliveredAt ??= turns;
    },
    onTurn(own, asksForWork, canSteer) {
      const usage = addUsage(before, own);
      call?.spend.set(call.key, usage.cost);
      const hit = budgetHit(budget, usage) ?? call?.spend.hit() ?? null;
      if (!hit) return null;
      reached = hit;
      if (!asksForWork) return null;
      const stop = { stop: { code: "BUDGET_EXCEEDED" as const, message: budgetMessage(hit) } };
      if (warnedAt === null) {
        warnedAt = usage.turns;
        return canSteer ? { steer: wrapUpText(hit) } : stop;
      }
      if (deliveredAt !== null) return usage.turns > deliveredAt ? stop : null;
      return usage.turns > warnedAt + UNDELIVERED_TURNS ? stop : null;
    },
  };
}
