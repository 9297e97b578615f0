// Stage "admit": a task whose call was cancelled, or whose call's (or pi session's) money is spent, while it waited
// does not start.
import { budgetMessage } from "../budget.ts";
import type { RunResult } from "../types.ts";
import { abortStop } from "./process/abort-reason.ts";
import { failedResult } from "./task-error.ts";
import type { TaskContext } from "./task-context.ts";

export function admitTask(task: TaskContext): RunResult | void {
  const { wiring } = task;
  if (wiring.signal?.aborted) {
    const stop = abortStop(wiring.signal.reason, false);
    return failedResult(stop.message, stop.code);
  }
  const callHit = wiring.callSpend?.hit();
  // The call's money is spent: a task still waiting to start does not start.
  if (callHit) return failedResult(`${budgetMessage(callHit)}: not started`, "BUDGET_EXCEEDED");
  // The session's caps (session-caps.ts): once its children spent maxSessionCost, queued tasks do not start.
  const refusal = wiring.startRefusal?.();
  if (refusal) return failedResult(refusal.message, refusal.code);
}
