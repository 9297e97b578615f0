// Runs one child pi to completion: spawn, read events, enforce timeouts / loop detection / output limits,
// decide when it is done, stop it with the kill protocol, and (with the finalize contract) nudge it in the
// same session when it stopped without calling subagent_finalize. Always resolves with a RunResult.
import { abortStop } from "./abort-reason.ts";
import type { ChildProcess, Clock, ExitInfo, Host } from "../../host.ts";
import { killTree, reapDescendants, waitFor } from "./kill.ts";
import { LineSplitter } from "./line-splitter.ts";
import { drain } from "./drain.ts";
import { applyEvent, newRunState, recordUserMessage, type RunState } from "./run-state.ts";
import { MAX_NUDGES, NUDGE_TEXT, type FinalizeMode } from "./finalize-contract.ts";
import { sanitize } from "../../sanitize.ts";
import { JsonModeParser, MAX_EVENT_LINE, jsonModeKeep, parseCompactLine, type Transport } from "./transport.ts";
import { TailBuffer } from "../../truncate.ts";
import { STDERR_HEAD_CHARS, stderrSummary } from "./stderr-summary.ts";
import type { ChildEvent, ErrorCode, RunResult, StoredMessage, Usage } from "../../types.ts";
import { budgetMessage, hasBudget, type Budget, type CallSpend } from "../../budget.ts";
import { budgetWatch, type BudgetWatch } from "./budget-watch.ts";
import { RATE_LIMIT_RE, type RateGate } from "./rate-gate.ts";
import { gateFailure, type GateSpec } from "./gate.ts";
import type { Reuse } from "./pool.ts";
import { askBroker, DEFAULT_ASK_TIMEOUT_SEC, type AskBroker, type Asker, type AskMode } from "./ask.ts";
import { liveMarks, MARK_ENV, newMark, type MarkedProcess } from "./marks.ts";
import { endLeftovers, leftoversWarning } from "./leftovers.ts";

export type RunLimits = {
  /** Bytes a child may send on its event channel (fd 3, or stdout in json mode). */
  eventBytes: number;
  /** Bytes a child may write to stdout when stdout is not the event channel. */
  stdoutBytes: number;
  stderrBytes: number;
  stderrTail: number;
  /** Longest output kept in full (the store's copy); longer is cut with SUBAGENT_OUTPUT_TRUNCATED. */
  outputChars: number;
};

export const DEFAULT_LIMITS: RunLimits = {
  eventBytes: 64 * 1024 * 1024,
  stdoutBytes: 64 * 1024 * 1024,
  stderrBytes: 16 * 1024 * 1024,
  stderrTail: 8 * 1024,
  outputChars: 4 * 1024 * 1024,
};
/** pi's JSON mode repeats the whole message per delta, so it legitimately sends far more. */
export const JSON_MODE_EVENT_BYTES = 1024 * 1024 * 1024;

export type RunSpec = {
  argv: string[];
  env: Record<string, string>;
  /** The child's pi session file (--session): what a corrective message continues. */
  sessionFile: string;
  cwd: string;
  prompt: string;
  transport: Transport;
  finalize: FinalizeMode;
  timeoutSec: number;
  extendDebounceSec: number;
  maxRuntimeSec: number;
  loopingToolCount: number;
  /** Turns, tokens, dollars: reaching one gets the child a "wrap up" steer, then a stop (budget-watch.ts). */
  budget?: Budget;
  /** The call's rate-limit gate: told of this child's 429s and successes; its holds are sent to the child. */
  rateGate?: RateGate;
  /** The delegate call's shared maxCost, and this child's key in it. */
  callSpend?: { spend: CallSpend; key: string };
  /** Spent by earlier attempts of this task (a fallback model): counts against its budgets. */
  spentBefore?: Usage;
  limits?: Partial<RunLimits>;
  /** Grace after the final agent_end before the child is stopped (it normally exits by itself at once). */
  exitGraceMs?: number;
  /** The child's pi emits agent_settled (≥ 0.80.4): only that ends the run; agent_end may be followed by
   *  compaction recovery or queued messages that take longer than any grace. */
  settles?: boolean;
  killGraceMs?: number;
  signal?: AbortSignal;
  onEvent?: (state: RunState, ev: ChildEvent) => void;
  /** Another harness's stdout parser (runtimes/): its lines are read instead of pi's JSON mode. */
  parser?: () => { parse(line: string): ChildEvent[]; end?(exitCode: number | null): ChildEvent[] };
  /** Stopping also signals every descendant, not only the main process (CLIs that do not pass it on). */
  termTree?: boolean;
  onSpawn?: (pid: number) => void;
  /** Given: the child gets a control pipe (fd 4); called with its writer at each spawn and with null at exit. */
  onControl?: (send: ((line: string) => boolean) | null) => void;
  /** Run on a kept child of the call (pool.ts) instead of a process of its own. */
  reuse?: Reuse;
  /** An acceptance gate: the child runs it (its env says which); only a passing attempt makes the run complete. */
  gate?: GateSpec;
  /** The child's questions (ask.ts): who answers, and the settings. Without it each is answered "no one can answer now". */
  ask?: { asker?: Asker; mode: AskMode; timeoutSec: number; sessionId: string; label: string };
  /** The task's session id: part of the mark its processes carry (marks.ts), so `subagents cancel ID` finds them. */
  sessionId?: string;
  /** Processes the child's commands leave running are kept (and recorded) instead of ended with the run. */
  keepProcesses?: boolean;
};

type Stop = { code: ErrorCode; message: string };

/** What a child is told when it goes on after a rate limit outlasted pi's own retries. */
export const CONTINUE_TEXT = "The model provider was rate limited; continue the task where you left off.";
const MAX_LIMITED_RUNS = 8;

function rateLimitedStop(gate: RateGate, ev: ChildEvent): Stop {
  const why = ev.type === "rate_limit" ? `${ev.status}${ev.retryAfterMs !== undefined ? `, retry after ${Math.ceil(ev.retryAfterMs / 1000)}s` : ""}` : (ev.type === "assistant" && ev.errorMessage) || "429";
  return { code: "RATE_LIMITED", message: `Rate limited (${why}): waiting longer would pass this call's ${Math.round(gate.maxWaitMs / 1000)}s limit` };
}

export const timeoutMessage = (sec: number) => `Timed out after ${sec}s. Consider resuming with a longer timeout.`;

export const LOOP_MESSAGE = "Loop detected: sub-agent is repeating the same tool calls";

/** The spec's timeout text, plus which tool call was still running (the usual reason a child hangs). */
function timeoutStop(state: RunState, sec: number, now: number): Stop {
  const open = [...state.openTools.values()].sort((a, b) => a.at - b.at)[0];
  const hung = open ? ` The tool call "${open.name}" had been running for ${Math.round((now - open.at) / 1000)}s without finishing.` : "";
  return { code: "SUBAGENT_TIMEOUT", message: `${timeoutMessage(sec)}${hung}` };
}

/** One child process from spawn to exit. Returns why it was stopped, if it was. */
type Attempt = { exit: ExitInfo; stop: Stop | null; stderr: string; stderrHead: string; stderrWhole: boolean; keptChild?: { pid: number; task: number }; leftovers: MarkedProcess[] };

async function runAttempt(host: Host, clock: Clock, spec: RunSpec, state: RunState, stdin: string, started: number, budget: BudgetWatch, asks: AskBroker): Promise<Attempt> {
  const limits = { ...DEFAULT_LIMITS, ...(spec.transport === "json" ? { eventBytes: JSON_MODE_EVENT_BYTES } : {}), ...spec.limits };
  const stderr = new TailBuffer(limits.stderrTail);
  // The start of stderr too: a crash's first exception line is often long gone from the tail.
  let stderrHead = "";
  let stderrChars = 0;
  let stop: Stop | null = null;
  let proc: ChildProcess;
  // What the child's work starts carries this mark (a kept child gives its task's session a mark of its own).
  let mark = spec.reuse ? null : newMark(spec.env[MARK_ENV], host.pid, spec.sessionId ?? "", spec.keepProcesses);
  try {
    // The child reports delivery on fd 3, so control needs the compact transport.
    const control = (!!spec.onControl || !!spec.budget || !!spec.callSpend || !!spec.rateGate || !!spec.ask) && spec.transport === "compact";
    const env = { ...spec.env, ...(control ? { PI_SUBAGENT_CONTROL_FD: "4" } : {}), ...(mark ? { [MARK_ENV]: mark } : {}) };
    const start = { cmd: spec.argv, cwd: spec.cwd, env, stdin, fd3: spec.transport === "compact", control };
    proc = spec.reuse ? spec.reuse.pool.lease(host, start, spec.sessionFile, spec.reuse.files) : host.spawn(start);
  } catch (err) {
    return { exit: { code: null, signal: null }, stop: { code: "SUBAGENT_FAILED", message: `Failed to spawn sub-agent process: ${(err as Error).message}` }, stderr: "", stderrHead: "", stderrWhole: true, leftovers: [] };
  }
  mark ??= proc.mark ?? null;
  if (mark) liveMarks.add(mark);
  spec.onSpawn?.(proc.pid);
  spec.onControl?.(proc.sendControl ?? null);
  // Every hold of the call reaches this child's next model request, and its window.
  const sendHold = (until: number) => {
    state.holdUntil = until;
    state.version++;
    proc.sendControl?.(JSON.stringify({ type: "hold", until }));
  };
  const unhold = spec.rateGate?.onHold(sendHold);
  if (spec.rateGate?.remaining()) sendHold(spec.rateGate.until);
  let reportedLimit = false;

  let killing: Promise<ExitInfo> | null = null;
  let finalTree: number[] = [];
  const stopWith = (s: Stop) => {
    stop ??= s;
    killing ??= killTree(host, clock, proc, spec.killGraceMs, spec.termTree);
  };

  // --- events ---
  let graceTimer: unknown = null;
  const clearGrace = () => {
    if (graceTimer !== null) clock.clearTimeout(graceTimer);
    graceTimer = null;
  };
  const foreign = spec.parser?.() ?? null;
  const parser = foreign ?? (spec.transport === "json" ? new JsonModeParser() : null);
  const onEvent = (ev: ChildEvent) => {
    // Once the run is being stopped, what the child still does while it dies is not part of the record: a budget
    // stop reports the spend it stopped at, and the window agrees with it.
    if (stop) return;
    applyEvent(state, ev, clock.now());
    if (ev.type === "tool_start" && spec.loopingToolCount > 0 && state.loopCount >= spec.loopingToolCount) stopWith({ code: "LOOP_DETECTED", message: LOOP_MESSAGE });
    const gate = spec.rateGate;
    const limitedTurn = ev.type === "assistant" && ev.stopReason === "error" && RATE_LIMIT_RE.test(ev.errorMessage ?? "");
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
    if (ev.type === "assistant") {
      const action = budget.onTurn(state.usage, ev.toolCalls.some((c) => c.name !== "subagent_finalize"), !!proc.sendControl);
      if (action && "stop" in action) stopWith(action.stop);
      else if (action) proc.sendControl?.(JSON.stringify({ type: "steer", id: `budget-${proc.pid}`, text: action.steer }));
    }
    if (ev.type === "settled" || (ev.type === "agent_end" && !spec.settles)) {
      clearGrace();
      finalTree = host.descendants(proc.pid);
      // After a failed model call an older pi may retry (2, 4, 8 s back-off): wait longer before calling it done.
      const grace = state.stopReason === "error" && ev.type === "agent_end" ? 20_000 : (spec.exitGraceMs ?? 3000);
      graceTimer = clock.setTimeout(() => {
        if (state.agentEnded) killing ??= killTree(host, clock, proc, spec.killGraceMs, spec.termTree);
      }, grace);
    } else if (ev.type === "turn_start" || ev.type === "retry") clearGrace();
    spec.onEvent?.(state, ev);
    if (ev.type === "ask") asks.handle(ev, proc.sendControl ?? null);
    if (ev.type === "ask_closed") asks.close(ev.id);
  };
  const onLine = (line: string, cut: boolean) => {
    if (cut && !parser) return; // a compact line never legitimately reaches the cap
    if (foreign) {
      for (const ev of foreign.parse(line)) onEvent(ev);
      return;
    }
    const ev = parser ? (parser as JsonModeParser).parse(line) : parseCompactLine(line);
    if (ev) onEvent(ev);
  };
  const splitter = new LineSplitter(onLine, MAX_EVENT_LINE, parser && !foreign ? jsonModeKeep : undefined);
  const counted = (limit: number, what: string, sink: (c: Uint8Array) => void) => {
    let bytes = 0;
    return (c: Uint8Array) => {
      bytes += c.byteLength;
      if (bytes > limit) {
        stopWith({ code: "SUBAGENT_OUTPUT_TRUNCATED", message: `Sub-agent ${what} exceeded the ${Math.round(limit / 1048576)} MB limit and was stopped` });
        return false;
      }
      sink(c);
      return true;
    };
  };
  const events = spec.transport === "json" ? proc.stdout : proc.fd3;
  const decoder = new TextDecoder();
  const readers = [
    drain(events, counted(limits.eventBytes, "event output", (c) => splitter.push(c))),
    spec.transport === "json" ? Promise.resolve() : drain(proc.stdout, counted(limits.stdoutBytes, "stdout", () => {})),
    drain(
      proc.stderr,
      counted(limits.stderrBytes, "stderr", (c) => {
        const text = decoder.decode(c, { stream: true });
        if (stderrHead.length < STDERR_HEAD_CHARS) stderrHead += text.slice(0, STDERR_HEAD_CHARS - stderrHead.length);
        stderrChars += text.length;
        stderr.append(text);
      }),
    ),
  ];

  // --- timers ---
  const timers: unknown[] = [];
  const at = (ms: number, fn: () => void) => timers.push(clock.setTimeout(fn, Math.max(0, ms)));
  // Spec 000: when `timeout` elapses an idle timer of extendDebounce starts, and only a new tool *call* resets it.
  // A tool that is still running (a hung `npm run dev`) does not count as activity: nothing else stops it.
  const timeoutAt = started + spec.timeoutSec * 1000;
  const checkTimeout = () => {
    const sinceCall = clock.now() - Math.max(timeoutAt, state.lastToolCallAt, asks.lastAnswerAt);
    const debounceMs = spec.extendDebounceSec * 1000;
    // A child waiting on a question is not idle; askTimeout bounds the wait (ask.ts), so this cannot go on forever.
    if (asks.pending()) return at(Math.max(debounceMs, 1000), checkTimeout);
    if (sinceCall >= debounceMs) stopWith(timeoutStop(state, spec.timeoutSec, clock.now()));
    else at(debounceMs - sinceCall, checkTimeout);
  };
  at(timeoutAt - clock.now(), checkTimeout);
  at(started + spec.maxRuntimeSec * 1000 - clock.now(), () => stopWith(timeoutStop(state, spec.maxRuntimeSec, clock.now())));
  const onAbort = () => stopWith(abortStop(spec.signal?.reason));
  if (spec.signal?.aborted) onAbort();
  else spec.signal?.addEventListener("abort", onAbort, { once: true });

  let exit = await proc.exited;
  asks.closeAll("ended");
  unhold?.();
  spec.onControl?.(null);
  if (killing) exit = await killing;
  // Grandchildren can hold our pipes open after pi exits: give the readers a moment, never wait for EOF.
  await waitFor(clock, Promise.all(readers), 300);
  splitter.end();
  if (foreign?.end) for (const ev of foreign.end(exit.code)) onEvent(ev);
  reapDescendants(host, finalTree);
  // Processes that left the tree (double-forked, setsid) still carry the mark: found and ended here, on every end
  // path, unless the task keeps them. A kept child's lease was looked at before the process took another task.
  // A run stopped by a person (cancel, Ctrl-C, SIGTERM) keeps nothing, keepProcesses or not.
  const leftovers = [...(proc.leftovers ?? [])];
  if (mark) {
    for (const p of await endLeftovers(host, clock, mark, { keep: spec.keepProcesses && !spec.signal?.aborted, graceMs: spec.killGraceMs })) if (!leftovers.some((l) => l.pid === p.pid)) leftovers.push(p);
    liveMarks.delete(mark);
  }
  clearGrace();
  for (const t of timers) clock.clearTimeout(t);
  spec.signal?.removeEventListener("abort", onAbort);
  const tail = stderr.toString();
  const keptChild = proc.task && proc.task > 1 ? { pid: proc.pid, task: proc.task } : undefined;
  return { exit, stop, stderr: tail, stderrHead, stderrWhole: stderrChars <= tail.length, ...(keptChild ? { keptChild } : {}), leftovers };
}

function classify(state: RunState, { exit, stop, stderr, stderrHead, stderrWhole }: Attempt, finalize: FinalizeMode): { status: "completed" | "error"; output: string; error?: string; code?: ErrorCode } | "nudge" {
  const partial = state.finalize?.result ?? state.lastText;
  if (stop) return { status: "error", output: partial, error: stop.message, code: stop.code };
  if (state.errorMessage) return { status: "error", output: state.lastText, error: state.errorMessage, code: "SUBAGENT_FAILED" };
  if (!state.agentEnded && !state.finalize) {
    const why = stderrSummary(stderrHead, stderr, stderrWhole) || (exit.signal ? `killed by ${exit.signal}` : "no output");
    return { status: "error", output: state.lastText, error: `Sub-agent process exited with code ${exit.code ?? "null"} before finishing: ${why}`, code: "SUBAGENT_FAILED" };
  }
  const f = state.finalize;
  if (f?.status === "SUCCESS") return { status: "completed", output: f.result ?? "" };
  if (f?.status === "ERROR") return { status: "error", output: f.result ?? "", error: f.error ?? "Sub-agent reported an error", code: "SUBAGENT_FAILED" };
  // Spec 000: without the strict contract the result is the last assistant text.
  if (finalize !== "required") return { status: "completed", output: state.lastText };
  return "nudge";
}

/** Secrets masked inside the structured result too; what no longer parses after masking is kept as masked text. */
function sanitizedData(data: unknown): unknown {
  const masked = sanitize(JSON.stringify(data));
  try {
    return JSON.parse(masked);
  } catch {
    return masked;
  }
}

export function sanitizeMessage(m: StoredMessage): StoredMessage {
  if (m.role !== "assistant") return { ...m, text: sanitize(m.text) };
  return {
    ...m,
    text: sanitize(m.text),
    toolCalls: m.toolCalls.map((c) => ({ name: c.name, args: sanitize(c.args) })),
    ...(m.error !== undefined ? { error: sanitize(m.error) } : {}),
  };
}

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
    if (verdict === "nudge" && state.nudges < MAX_NUDGES && host.stat(spec.sessionFile)?.isFile && !spec.signal?.aborted) {
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
    const gateFailed = verdict !== "nudge" && verdict.status === "completed" ? gateFailure(spec.gate, state.gate) : null;
    if (gateFailed && verdict !== "nudge") Object.assign(verdict, { status: "error", error: gateFailed, code: "GATE_FAILED" });
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
    if (output.length > limits.outputChars) {
      output = `${output.slice(0, limits.outputChars)}\n[output cut at ${limits.outputChars} characters]`;
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
      ...(budget.reached && v.status === "completed" ? { warnings: [`${budgetMessage(budget.reached).replace("Budget exceeded", "budget reached")}: wrapped up when told`] } : {}),
    };
    if (asks.warnings.length) result.warnings = [...(result.warnings ?? []), ...asks.warnings.map(sanitize)];
    if (leftovers.length) result.warnings = [...(result.warnings ?? []), sanitize(leftoversWarning(leftovers, spec.keepProcesses && !spec.signal?.aborted ? { sessionId: spec.sessionId ?? "?" } : undefined))];
    return result;
  }
}
