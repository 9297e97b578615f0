// Runs one child pi to completion: each attempt (attempt.ts) is one process from spawn to exit; between attempts
// this loop decides what the end means (result.ts) — done, a nudge in the same session when it stopped without
// calling subagent_finalize (the finalize contract), or a wait for the call's rate-limit hold and a new attempt —
// and builds the RunResult. Always resolves with a RunResult.
import type { Clock, Host } from "../../host.ts";
import { sanitize } from "../../sanitize.ts";
import type { ChildEvent, ErrorCode, RunResult } from "../../types.ts";
import { budgetMessage, hasBudget } from "../../budget.ts";
import { askBroker, DEFAULT_ASK_TIMEOUT_SEC } from "./ask.ts";
import { runAttempt } from "./attempt.ts";
import { budgetWatch } from "./budget-watch.ts";
import { MAX_NUDGES, NUDGE_TEXT } from "./finalize-contract.ts";
import { gateFailure } from "./gate.ts";
import { leftoversWarning } from "./leftovers.ts";
import type { MarkedProcess } from "./marks.ts";
import { RATE_LIMIT_RE } from "./rate-gate.ts";
import { classify, outputCut, sanitizedData, sanitizeMessage } from "./result.ts";
import { applyEvent, newRunState, recordUserMessage } from "./run-state.ts";
import { DEFAULT_LIMITS, type RunSpec } from "./run-spec.ts";

export { DEFAULT_LIMITS, JSON_MODE_EVENT_BYTES, type RunLimits, type RunSpec } from "./run-spec.ts";
export { LOOP_MESSAGE, timeoutMessage } from "./stops.ts";
export { sanitizeMessage } from "./result.ts";

/** What a child is told when it goes on after a rate limit outlasted pi's own retries. */
export const CONTINUE_TEXT = "The model provider was rate limited; continue the task where you left off.";
const MAX_LIMITED_RUNS = 8;

export async function runChild(host: Host, clock: Clock, spec: RunSpec): Promise<RunResult> {
  const started = clock.now();
  const state = newRunState(started);
  state.sessionFile = spec.sessionFile;
  if (hasBudget(spec.budget)) state.budget = spec.budget;
  let stdin = spec.prompt;
  const limits = { ...DEFAULT_LIMITS, ...spec.limits };
  recordUserMessage(state, stdin);
  const budget = budgetWatch(spec.budget, spec.callSpend, spec.spentBefore);
  const asks = askBroker({
    ...(spec.ask ?? { mode: "auto", timeoutSec: DEFAULT_ASK_TIMEOUT_SEC, sessionId: "", label: "" }),
    clock,
    signal: spec.signal,
    onActivity: (text) => {
      const ev: ChildEvent = { type: "note", text };
      applyEvent(state, ev, clock.now());
      spec.onEvent?.(state, ev);
    },
  });
  let limitedRuns = 0;
  const leftovers: MarkedProcess[] = [];
  for (;;) {
    state.agentEnded = false;
    const attempt = await runAttempt(host, clock, spec, state, stdin, started, budget, asks);
    leftovers.push(...attempt.leftovers);
    const { exit, stderr } = attempt;
    const verdict = classify(state, attempt, spec.finalize);
    // The child extension normally delivers the corrective messages itself (pi follow-ups, same process). This
    // is the fallback when it could not: continue the child's session file in a new process.
    if (
      verdict === "nudge" &&
      state.nudges < MAX_NUDGES &&
      host.stat(spec.sessionFile)?.isFile &&
      !spec.signal?.aborted
    ) {
      applyEvent(state, { type: "nudge" }, clock.now());
      stdin = NUDGE_TEXT;
      continue;
    }
    if (verdict !== "nudge" && verdict.code === "SUBAGENT_FAILED" && RATE_LIMIT_RE.test(state.errorMessage ?? "")) {
      // pi spent its own retries inside the limit: wait out the call's hold and go on, until the call's wait is spent.
      const gate = spec.rateGate;
      if (gate && !gate.exhausted && limitedRuns++ < MAX_LIMITED_RUNS && !spec.signal?.aborted) {
        if (!gate.remaining()) gate.limited();
        await gate.cleared(spec.signal);
        // The failure is over: only what the next attempt reports counts.
        state.errorMessage = undefined;
        state.stopReason = undefined;
        stdin = host.stat(spec.sessionFile)?.isFile ? CONTINUE_TEXT : spec.prompt;
        if (stdin === CONTINUE_TEXT) recordUserMessage(state, stdin);
        continue;
      }
      const waited = gate ? ` after ${Math.round(gate.heldMs / 1000)}s of waiting` : "";
      verdict.error = `Rate limited${waited}: ${state.errorMessage}`;
      verdict.code = "RATE_LIMITED";
    }
    const gateFailed =
      verdict !== "nudge" && verdict.status === "completed" ? gateFailure(spec.gate, state.gate) : null;
    if (gateFailed && verdict !== "nudge")
      Object.assign(verdict, { status: "error", error: gateFailed, code: "GATE_FAILED" });
    const n = state.nudges;
    const v =
      verdict === "nudge"
        ? {
            status: "error" as const,
            output: state.textBeforeNudge ?? state.lastText,
            error: `Sub-agent stopped without calling subagent_finalize (after ${n} corrective message${n === 1 ? "" : "s"})`,
            code: "FINALIZE_MISSING" as ErrorCode,
          }
        : verdict;
    let output = sanitize(v.output);
    let code = v.code;
    // Never "completed" with an answer quietly short: the record, --json and the tool result say what was cut.
    const cut = outputCut(state, v.output, limits.outputChars);
    if (cut) {
      output = `${output.slice(0, cut.kept)}\n[output cut at ${cut.kept} characters]`;
      code ??= "SUBAGENT_OUTPUT_TRUNCATED";
    }
    const result: RunResult = {
      status: v.status,
      output,
      error: v.error === undefined ? undefined : sanitize(v.error),
      errorCode: code,
      finalize: state.finalize && {
        status: state.finalize.status,
        ...(state.finalize.result !== undefined ? { result: sanitize(state.finalize.result) } : {}),
        ...(state.finalize.error !== undefined ? { error: sanitize(state.finalize.error) } : {}),
        ...(state.finalize.data !== undefined ? { data: sanitizedData(state.finalize.data) } : {}),
      },
      finalized: !!state.finalize,
      usage: { ...state.usage },
      model: state.provider && state.model ? `${state.provider}/${state.model}` : state.model,
      stopReason: state.stopReason,
      exitCode: exit.code,
      sessionFile: state.sessionFile,
      toolCount: state.toolCount,
      messages: state.messages.map(sanitizeMessage),
      stderrTail: sanitize(stderr),
      durationMs: clock.now() - started,
      ...(state.gate ? { gate: { passed: state.gate.passed, attempts: state.gate.attempts } } : {}),
      ...(state.finalize?.data !== undefined ? { structured: sanitizedData(state.finalize.data) } : {}),
      ...(attempt.keptChild ? { keptChild: attempt.keptChild } : {}),
      ...(budget.reached && v.status === "completed"
        ? {
            warnings: [
              `${budgetMessage(budget.reached).replace("Budget exceeded", "budget reached")}: wrapped up when told`,
            ],
          }
        : {}),
    };
    if (cut)
      result.warnings = [
        ...(result.warnings ?? []),
        `output cut: the answer had ${cut.of} characters, the first ${cut.kept.toLocaleString("en-US")} are kept (SUBAGENT_OUTPUT_TRUNCATED)${cut.lineLost ? "; its message was over the 16 MB line limit of pi's JSON output, so its usage and tool calls are not known" : ""}`,
      ];
    // Messages this task never got (it ended first) and refusals it met are part of its record.
    const team = spec.team?.leave() ?? [];
    if (team.length) result.warnings = [...(result.warnings ?? []), ...team.map(sanitize)];
    if (asks.warnings.length) result.warnings = [...(result.warnings ?? []), ...asks.warnings.map(sanitize)];
    if (leftovers.length)
      result.warnings = [
        ...(result.warnings ?? []),
        sanitize(
          leftoversWarning(
            leftovers,
            spec.keepProcesses && !spec.signal?.aborted ? { sessionId: spec.sessionId ?? "?" } : undefined,
          ),
        ),
      ];
    return result;
  }
}
