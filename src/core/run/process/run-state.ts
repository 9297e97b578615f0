// Folds engine events into a bounded picture of one child run. Mutable on purpose: it is updated for every
// event of a streaming child, and copying it each time would cost more than the child's own work.
import { framedMessage, messageLine } from "../../team.ts";
import { rateLimitLine, retryLine, textLines, toolCallLine, toolResultLine } from "./activity.ts";
import { sanitize } from "../../sanitize.ts";
import { NUDGE_TEXT } from "./finalize-contract.ts";
import { OUTPUT_CHARS } from "./transport.ts";
import { todoProgress, type TodoProgress } from "./todos.ts";
import type { Budget } from "../../budget.ts";
import { emptyUsage, type ChildEvent, type FinalizePayload, type StoredMessage, type Usage } from "../../types.ts";

export const LIMITS = {
  activityLines: 400,
  messages: 2000,
  messageText: 1024 * 1024,
  toolResultText: 2000,
  streamingTail: 4096,
};

/** An acceptance gate's attempts so far, as the child reports them (gate.ts). */
export type GateProgress = {
  attempts: number;
  passed: boolean;
  running: boolean;
  lastOutput?: string;
  lastExit?: number | null;
  timedOut?: boolean;
};

export type RunState = {
  childSessionId?: string;
  sessionFile?: string;
  usage: Usage;
  model?: string;
  provider?: string;
  toolCount: number;
  /** Tool calls started and not yet ended, by call id (to name a hung tool in the timeout message). */
  openTools: Map<string, { name: string; at: number }>;
  /** When the last tool call started: after the timeout, only tool calls extend it. */
  lastToolCallAt: number;
  /** The child's todo list, when it keeps one through a todo tool (the window's `[completed/total]`). */
  todos?: TodoProgress;
  /** Last non-empty assistant text. */
  lastText: string;
  /** lastText is the first part of a longer answer (the child cut it to fit its bound); `of`: the whole length. */
  lastTextCut?: { of?: number };
  /** The finalize result is the first part of a longer one. */
  finalizeCut?: { of?: number };
  /** Text of the assistant message being streamed right now (tail only). */
  streaming: string;
  /** The first OUTPUT_CHARS of the message being streamed: what is kept of an answer stopped before it ended. */
  streamHead: string;
  /** Rolling activity lines for windows (oldest dropped first). */
  activity: string[];
  droppedActivity: number;
  stopReason?: string;
  errorMessage?: string;
  finalize?: FinalizePayload;
  /** Corrective messages delivered so far (finalize contract). */
  nudges: number;
  /** The last text from before the first corrective message: FINALIZE_MISSING's partial output. */
  textBeforeNudge?: string;
  messages: StoredMessage[];
  droppedMessages: number;
  agentEnded: boolean;
  sawRetry: boolean;
  loopSignature: string;
  loopCount: number;
  lastEventAt: number;
  /** The task's budgets, for windows ("turns 3/5"). */
  budget?: Budget;
  /** The call is held by a rate limit until then (the window says "waiting: rate limited"). */
  holdUntil?: number;
  /** The acceptance gate's attempts so far (gate.ts). */
  gate?: GateProgress;
  /** Bumped on every change, so renderers can skip identical frames. */
  version: number;
};

export function newRunState(now: number): RunState {
  return {
    usage: emptyUsage(),
    toolCount: 0,
    openTools: new Map(),
    lastToolCallAt: 0,
    lastText: "",
    streaming: "",
    streamHead: "",
    activity: [],
    droppedActivity: 0,
    nudges: 0,
    messages: [],
    droppedMessages: 0,
    agentEnded: false,
    sawRetry: false,
    loopSignature: "",
    loopCount: 0,
    lastEventAt: now,
    version: 0,
  };
}

function pushActivity(s: RunState, lines: string[]): void {
  for (const line of lines) s.activity.push(line);
  const over = s.activity.length - LIMITS.activityLines;
  if (over > 0) {
    s.activity.splice(0, over);
    s.droppedActivity += over;
  }
}

function pushMessage(s: RunState, m: StoredMessage): void {
  if (s.messages.length >= LIMITS.messages) {
    // Keep the first message (the task) and the newest ones.
    s.messages.splice(1, 1);
    s.droppedMessages++;
  }
  s.messages.push(m);
}

const capText = (t: string, n: number) => (t.length > n ? `${t.slice(0, n)}…` : t);

export function recordUserMessage(s: RunState, text: string): void {
  pushMessage(s, { role: "user", text: capText(text, LIMITS.messageText) });
}

/** Applies one event. Returns true when the event repeats the previous tool call (for loop detection). */
export function applyEvent(s: RunState, ev: ChildEvent, now: number): void {
  s.lastEventAt = now;
  s.version++;
  switch (ev.type) {
    case "session":
      s.childSessionId = ev.id || s.childSessionId;
      s.sessionFile = ev.file || s.sessionFile;
      return;
    case "turn_start":
      // A new turn after agent_end means pi retried or continued: the run is not over.
      s.agentEnded = false;
      s.streamHead = "";
      return;
    case "text":
      if (s.streamHead.length < OUTPUT_CHARS) s.streamHead += ev.delta.slice(0, OUTPUT_CHARS - s.streamHead.length);
      s.streaming += ev.delta;
      if (s.streaming.length > LIMITS.streamingTail * 2) s.streaming = s.streaming.slice(-LIMITS.streamingTail);
      return;
    case "tool_start": {
      s.toolCount++;
      s.lastToolCallAt = now;
      s.openTools.set(ev.id, { name: ev.name, at: now });
      s.todos = todoProgress(ev.name, ev.args) ?? s.todos;
      const signature = `${ev.name}\u0000${ev.args}`;
      if (signature === s.loopSignature) s.loopCount++;
      else {
        s.loopSignature = signature;
        s.loopCount = 1;
      }
      pushActivity(s, [toolCallLine(ev.name, ev.args)]);
      return;
    }
    case "tool_end": {
      s.openTools.delete(ev.id);
      const line = toolResultLine(ev.name, ev.result, ev.isError);
      if (line) pushActivity(s, [line]);
      pushMessage(s, {
        role: "toolResult",
        name: ev.name,
        text: capText(ev.result, LIMITS.toolResultText),
        isError: ev.isError,
      });
      return;
    }
    case "assistant": {
      s.streaming = "";
      s.streamHead = "";
      s.usage.input += ev.usage.input;
      s.usage.output += ev.usage.output;
      s.usage.cacheRead += ev.usage.cacheRead;
      s.usage.cacheWrite += ev.usage.cacheWrite;
      s.usage.cost += ev.usage.cost;
      s.usage.turns++;
      s.model = ev.model ?? s.model;
      s.provider = ev.provider ?? s.provider;
      s.stopReason = ev.stopReason;
      s.errorMessage =
        ev.stopReason === "error" || ev.stopReason === "aborted"
          ? ev.errorMessage || `model call ended: ${ev.stopReason}`
          : undefined;
      if (ev.text.trim()) {
        s.lastText = ev.text;
        s.lastTextCut = ev.cut;
        pushActivity(s, textLines(ev.text));
      }
      if (s.errorMessage) pushActivity(s, [`✗ ${s.errorMessage}`]);
      pushMessage(s, {
        role: "assistant",
        text: capText(ev.text, LIMITS.messageText),
        toolCalls: ev.toolCalls.map((c) => ({ name: c.name, args: c.args })),
        error: s.errorMessage,
      });
      return;
    }
    case "retry":
      s.sawRetry = true;
      s.agentEnded = false;
      pushActivity(s, [retryLine(ev)]);
      return;
    case "finalize":
      s.finalize = ev.payload;
      s.finalizeCut = ev.cut;
      return;
    case "nudge":
      // Replies to a nudge are often just "OK.": the answer worth keeping is the one from before it.
      if (s.nudges++ === 0) s.textBeforeNudge = s.lastText;
      recordUserMessage(s, NUDGE_TEXT);
      pushActivity(s, ["↻ asked to call subagent_finalize"]);
      return;
    case "agent_end":
    case "settled":
      s.agentEnded = true;
      return;
    case "rate_limit":
      pushActivity(s, [rateLimitLine(ev.status, ev.retryAfterMs)]);
      return;
    case "totals":
      Object.assign(s.usage, ev.usage);
      if (ev.turns !== undefined) s.usage.turns = ev.turns;
      return;
    case "gate_start":
      s.gate = { ...(s.gate ?? { attempts: 0, passed: false }), running: true };
      // A gate that runs long is work in progress, like a tool call (the timeout's idle rule).
      s.lastToolCallAt = now;
      pushActivity(s, [`⚙ gate (attempt ${ev.attempt}): ${ev.command}`]);
      return;
    case "gate": {
      s.gate = {
        attempts: ev.attempt,
        passed: ev.passed,
        running: false,
        lastOutput: ev.output,
        lastExit: ev.exitCode,
        timedOut: ev.timedOut,
      };
      const how = ev.passed
        ? "✓ gate passed"
        : `✗ gate failed (${ev.timedOut ? "timed out" : `exit ${ev.exitCode ?? "?"}`})`;
      const last = ev.output.trim().split("\n").at(-1);
      pushActivity(s, [ev.passed || !last ? how : `${how}: ${last}`]);
      // Every attempt is part of the record (the transcript shows it where it happened).
      pushMessage(s, {
        role: "toolResult",
        name: "gate",
        text: capText(ev.output, LIMITS.toolResultText),
        isError: !ev.passed,
      });
      return;
    }
    case "steered":
      // The owner's steer is part of the conversation: the transcript shows it where the model saw it.
      recordUserMessage(s, ev.text);
      pushActivity(s, [`↪ steer: ${ev.text.split("\n")[0]}`]);
      return;
    case "note":
      pushActivity(s, [ev.text.split("\n")[0]]);
      return;
    case "message_in":
      // A sibling's message is part of the conversation, with its sender, where the model saw it.
      recordUserMessage(s, framedMessage(ev.from, ev.text));
      pushActivity(s, [messageLine(ev.from, ev.to, ev.text)]);
      return;
  }
}

/**
 * Lines a window shows: rolling activity plus the tail of the text being streamed. Sanitized here, on the few
 * lines that are shown, rather than on every delta: these lines reach the terminal and the parent session.
 */
export function windowLines(s: RunState, max: number): string[] {
  const streamingLines = s.streaming ? textLines(s.streaming) : [];
  const all = streamingLines.length ? s.activity.concat(streamingLines.slice(-max)) : s.activity;
  const shown = max > 0 ? all.slice(-max) : all;
  return sanitize(shown.join("\n")).split("\n");
}
