// The rules an attempt applies to each event of its child: the run state, loop detection, the call's rate-limit
// gate, budgets (a "wrap up" steer, then a stop), when the child counts as done (a grace, then the kill protocol),
// and the child's questions.
import type { ChildProcess, Clock, ExitInfo, Host } from "../../host.ts";
import type { ChildEvent } from "../../types.ts";
import type { AskBroker } from "./ask.ts";
import type { BudgetWatch } from "./budget-watch.ts";
import { killTree } from "./kill.ts";
import { RATE_LIMIT_RE } from "./rate-gate.ts";
import { applyEvent, type RunState } from "./run-state.ts";
import type { RunSpec } from "./run-spec.ts";
import { LOOP_MESSAGE, rateLimitedStop, type Stop } from "./stops.ts";

/** What an attempt's parts share while its child runs: why it stops, the kill under way, the tree at the end. */
export type AttemptRun = { stop: Stop | null; killing: Promise<ExitInfo> | null; finalTree: number[] };

export type EventRuleParts = {
  host: Host;
  clock: Clock;
  spec: RunSpec;
  state: RunState;
  proc: ChildProcess;
  budget: BudgetWatch;
  asks: AskBroker;
  run: AttemptRun;
  stopWith: (s: Stop) => void;
};

export function eventRules({ host, clock, spec, state, proc, budget, asks, run, stopWith }: EventRuleParts): {
  onEvent: (ev: ChildEvent) => void;
  clearGrace: () => void;
} {
  let reportedLimit = false;
  let graceTimer: unknown = null;
  const clearGrace = () => {
    if (graceTimer !== null) clock.clearTimeout(graceTimer);
    graceTimer = null;
  };
  const onEvent = (ev: ChildEvent) => {
    // Once the run is being stopped, what the child still does while it dies is not part of the record: a budget
    // stop reports the spend it stopped at, and the window agrees with it.
    if (run.stop) return;
    applyEvent(state, ev, clock.now());
    if (ev.type === "tool_start" && spec.loopingToolCount > 0 && state.loopCount >= spec.loopingToolCount)
      stopWith({ code: "LOOP_DETECTED", message: LOOP_MESSAGE });
    const gate = spec.rateGate;
    const limitedTurn =
      ev.type === "assistant" && ev.stopReason === "error" && RATE_LIMIT_RE.test(ev.errorMessage ?? "");
    if (ev.type === "rate_limit") {
      reportedLimit = true;
      gate?.limited(ev.retryAfterMs);
    }
    if (ev.type === "assistant" && gate) {
      // Without the child extension's report (json transport) the error text is all there is to go on.
      if (ev.stopReason !== "error") gate.succeeded();
      else if (limitedTurn && !reportedLimit) gate.limited();
    }
    // Only a child that meets a limit gives up on the call's spent wait; the others go on.
    if ((ev.type === "rate_limit" || limitedTurn) && gate?.exhausted) stopWith(rateLimitedStop(gate, ev));
    if (ev.type === "steered" && ev.id === `budget-${proc.pid}`) budget.onWrapUpDelivered(state.usage.turns);
    if (ev.type === "assistant") {
      const action = budget.onTurn(
        state.usage,
        ev.toolCalls.some((c) => c.name !== "subagent_finalize"),
        !!proc.sendControl,
      );
      if (action && "stop" in action) stopWith(action.stop);
      else if (action)
        proc.sendControl?.(JSON.stringify({ type: "steer", id: `budget-${proc.pid}`, text: action.steer }));
    }
    if (ev.type === "settled" || (ev.type === "agent_end" && !spec.settles)) {
      clearGrace();
      run.finalTree = host.descendants(proc.pid);
      // After a failed model call an older pi may retry (2, 4, 8 s back-off): wait longer before calling it done.
      const grace = state.stopReason === "error" && ev.type === "agent_end" ? 20_000 : (spec.exitGraceMs ?? 3000);
      graceTimer = clock.setTimeout(() => {
        if (state.agentEnded) run.killing ??= killTree(host, clock, proc, spec.killGraceMs, spec.termTree);
      }, grace);
    } else if (ev.type === "turn_start" || ev.type === "retry") clearGrace();
    spec.onEvent?.(state, ev);
    if (ev.type === "ask") asks.handle(ev, proc.sendControl ?? null);
    if (ev.type === "ask_closed") asks.close(ev.id);
    // Siblings of the call (core/team.ts): the hub routes a message and this child's tool gets its answer.
    if (ev.type === "message_send") {
      const reply = spec.team?.send(ev.to, ev.text) ?? { ok: false, text: "Not sent: this task has no siblings." };
      proc.sendControl?.(JSON.stringify({ type: "message_reply", id: ev.id, ...reply }));
    }
    if (ev.type === "message_in") spec.team?.delivered(ev.id);
    if (ev.type === "finalize") spec.team?.finishing();
  };
  return { onEvent, clearGrace };
}
