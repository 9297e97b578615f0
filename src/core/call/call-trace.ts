// A call's trace, built by its owner from what the call runner already reports (CallEvents, each child's events as
// its owner reads them): nothing runs in a child for it. The shape follows the OpenTelemetry GenAI semantic
// conventions (semantic-conventions-genai v0.1.0; attribute names from @opentelemetry/semantic-conventions):
//
//   invoke_workflow [name]                 the call (its parent: the front's, else TRACEPARENT of this process)
//     invoke_agent {agent}                 one per task, from its queueing to its end; its child's TRACEPARENT
//       queue                              the wait for a free slot or an `after` task (when it waited)
//       isolate · setup · fork             an isolated task's worktree and setup, a forked task's copy
//       start                              the child's launch until it reports its session (pi's start-up)
//       chat {model}                       one per model request (turn start → the assistant message)
//       execute_tool {tool}                one per tool call (its start → its end)
//       gate                               one per acceptance-gate attempt
//   events on invoke_agent: retry, rate_limit, steer, nudge, question, message
//
// Finished spans go to the process's exporter as they end (it batches them); the call's span ends with the call.
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_PROCESS_EXIT_CODE,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_WORKFLOW,
} from "@opentelemetry/semantic-conventions/incubating";
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE } from "@opentelemetry/semantic-conventions";
import { sanitize } from "../sanitize.ts";
import { newSpanId, newTraceId, taskSpanId, type TraceContext } from "../trace/context.ts";
import { providerName } from "../trace/provider-name.ts";
import type { Attrs, Span, SpanEvent, SpanKind, Tracing } from "../trace/span.ts";
import { addUsage, emptyUsage, type ChildEvent, type RunResult, type Usage } from "../types.ts";
import type { ResolvedTask, TaskOutcome, TaskPlacement } from "../run/task-types.ts";
import type { CallEvent } from "./runner.ts";

/** What a front knows of where its call belongs: a parent it was handed (an MCP request's `_meta.traceparent`),
 *  the saved workflow's name, the parent agent's tool call the call runs in. */
export type CallTraceOptions = {
  parent?: TraceContext;
  workflow?: string;
  tool?: { name: string; callId?: string };
};

/** The most of one prompt, output or tool result a span carries (content capture only). */
const CONTENT_CHARS = 64 * 1024;

type Open = { spanId: string; startMs: number };

type TaskTrace = {
  spanId: string;
  queuedMs: number;
  startedMs?: number;
  /** When its child was launched (the run stage began), until the child reports its session. */
  launchedMs?: number;
  /** When the last thing before the next model request ended (the child's start, a tool's end). */
  boundaryMs?: number;
  chat?: Open;
  tools: Map<string, Open & { name: string; args: string }>;
  gate?: Open & { attempt: number; command: string };
  events: SpanEvent[];
  placement?: TaskPlacement;
  /** The provider and model of its last model request, as the child named them. */
  provider?: string;
  model?: string;
};

export class CallTrace {
  readonly traceId: string;
  private readonly callSpan: string;
  private readonly toolSpan?: string;
  private readonly startMs: number;
  private readonly flags: number;
  private readonly state?: string;
  /** The tasks not ended yet, by index (a streamed call's ten thousand items keep only the running ones). */
  private readonly tasks = new Map<number, TaskTrace>();
  /** What the ended tasks add up to. */
  private readonly ended = { count: 0, failed: 0, usage: emptyUsage() };
  private readonly taskOf: (index: number) => ResolvedTask | undefined;
  /** The call's tasks were all queued at its start (a streamed call's each when taken). */
  private readonly listed: boolean;

  /** `tasks`: the call's tasks, or how to find one by index (a streamed call's, while it runs). */
  constructor(
    private readonly tracing: Tracing,
    tasks: readonly ResolvedTask[] | ((index: number) => ResolvedTask | undefined),
    private readonly o: CallTraceOptions = {},
  ) {
    this.listed = typeof tasks !== "function";
    this.taskOf = typeof tasks === "function" ? tasks : (i) => tasks[i];
    const parent = o.parent ?? tracing.parent;
    this.traceId = parent?.traceId ?? newTraceId();
    this.flags = parent ? parent.flags : 1;
    this.state = parent?.state;
    this.startMs = tracing.now();
    this.callSpan = newSpanId();
    if (o.tool) this.toolSpan = newSpanId();
  }

  /** A task's trace, made when it is first met: a listed task was queued when the call started. */
  private task(index: number): TaskTrace {
    let t = this.tasks.get(index);
    if (!t) {
      // Named from its session (taskSpanId): a kept child makes the same TRACEPARENT for the task by itself.
      const sessionId = this.taskOf(index)?.sessionId;
      t = {
        spanId: sessionId ? taskSpanId(this.traceId, sessionId) : newSpanId(),
        queuedMs: this.listed ? this.startMs : this.tracing.now(),
        tools: new Map(),
        events: [],
      };
      this.tasks.set(index, t);
    }
    return t;
  }

  /** The context a task's child continues the trace from: its invoke_agent span (TRACEPARENT in its environment). */
  childContext(index: number): TraceContext {
    return { traceId: this.traceId, spanId: this.task(index).spanId, flags: this.flags, state: this.state };
  }

  /** What the call runner reports, as it reports it. */
  event(e: CallEvent): void {
    if (e.type === "taskStart") this.taskStart(e.index);
    else if (e.type === "taskProgress") this.childEvent(e.index, e.event);
    else if (e.type === "taskEnd") this.taskEnd(e.index, e.outcome);
  }

  /** Times the stages of the task's owner that do work of their own (TaskWiring.onStage): an isolated task's
   *  worktree and setup command, a forked task's copy of the conversation. The child's run is told by its events;
   *  the rest take no time worth a span. */
  stageTimer(index: number): (stage: string) => () => void {
    return (stage) => {
      const task = this.taskOf(index);
      const isolated = !!(this.task(index).placement?.isolation ?? task?.isolation);
      // The child's own stage: its process starts now; the span "start" ends when it reports its session.
      if (stage === "child") this.task(index).launchedMs = this.tracing.now();
      const timed = stage === "fork" ? !!task?.fork : (stage === "isolate" || stage === "setup") && isolated;
      if (!timed) return () => {};
      const start = this.tracing.now();
      return () => this.stage(index, stage, start, this.tracing.now());
    };
  }

  taskStart(index: number): void {
    const t = this.task(index);
    t.startedMs = this.tracing.now();
    t.boundaryMs = t.startedMs;
    // It waited for a free slot (or a task it comes after) when another task ended before it could start.
    if (this.listed && this.ended.count > 0)
      this.emit(this.span(t.spanId, "queue", "internal", t.queuedMs, t.startedMs, { "subagents.stage": "queue" }));
  }

  placed(index: number, placement: TaskPlacement): void {
    this.task(index).placement = placement;
  }

  /** A stage of the task's owner (isolate, setup, fork). */
  stage(index: number, name: string, startMs: number, endMs: number): void {
    this.emit(this.span(this.task(index).spanId, name, "internal", startMs, endMs, { "subagents.stage": name }));
  }

  childEvent(index: number, ev: ChildEvent): void {
    const t = this.task(index);
    const now = this.tracing.now();
    switch (ev.type) {
      case "session":
        t.boundaryMs = now;
        // The child's start: process, runtime, pi and its extensions up to its first session (once per launch).
        if (t.launchedMs !== undefined)
          this.emit(this.span(t.spanId, "start", "internal", t.launchedMs, now, { "subagents.stage": "start" }));
        t.launchedMs = undefined;
        return;
      case "turn_start":
        t.chat = { spanId: newSpanId(), startMs: now };
        return;
      case "assistant":
        return this.chatEnd(t, ev, now);
      case "tool_start":
        t.tools.set(ev.id, { spanId: newSpanId(), startMs: now, name: ev.name, args: ev.args });
        return;
      case "tool_end":
        t.boundaryMs = now;
        return this.toolEnd(t, ev.id, now, ev.isError, ev.result);
      case "gate_start":
        t.gate = { spanId: newSpanId(), startMs: now, attempt: ev.attempt, command: ev.command };
        return;
      case "gate":
        return this.gateEnd(t, ev, now);
      case "retry":
        t.boundaryMs = now;
        t.events.push({
          name: "retry",
          timeMs: now,
          attributes: {
            "subagents.retry.attempt": ev.attempt,
            "subagents.retry.max_attempts": ev.maxAttempts,
            "subagents.retry.delay_ms": ev.delayMs,
            "subagents.retry.error": sanitize(ev.errorMessage),
          },
        });
        return;
      case "rate_limit":
        t.events.push({
          name: "rate_limit",
          timeMs: now,
          attributes: { [ATTR_HTTP_RESPONSE_STATUS_CODE]: ev.status, "subagents.retry_after_ms": ev.retryAfterMs },
        });
        return;
      case "steered":
        t.events.push({ name: "steer", timeMs: now, attributes: { "subagents.steer.id": ev.id } });
        return;
      case "nudge":
        t.events.push({ name: "nudge", timeMs: now });
        return;
      case "ask":
        t.events.push({ name: "question", timeMs: now, attributes: { "subagents.question.kind": ev.kind } });
        return;
      case "message_in":
        t.events.push({ name: "message", timeMs: now, attributes: { "subagents.message.from": ev.from } });
        return;
    }
  }

  taskEnd(index: number, outcome: TaskOutcome): void {
    const t = this.task(index);
    const task = this.taskOf(index);
    this.tasks.delete(index);
    const now = this.tracing.now();
    const { result } = outcome;
    this.ended.count++;
    if (result.status === "error") this.ended.failed++;
    this.ended.usage = addUsage(this.ended.usage, result.usage);
    // What the child left open (killed, timed out) ends with the task, as failed.
    if (t.chat) this.emit(this.closeChat(t, now));
    for (const id of [...t.tools.keys()]) this.toolEnd(t, id, now, true, "");
    if (t.gate) this.gateEnd(t, { attempt: t.gate.attempt, passed: false, exitCode: null, timedOut: false }, now);
    const p = t.placement;
    const attrs: Attrs = {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      [ATTR_GEN_AI_AGENT_NAME]: outcome.agent,
      [ATTR_GEN_AI_CONVERSATION_ID]: outcome.sessionId,
      [ATTR_GEN_AI_PROVIDER_NAME]: providerName(t.provider),
      [ATTR_GEN_AI_REQUEST_MODEL]: modelId(task?.model, t.provider) ?? t.model ?? modelId(result.model, t.provider),
      [ATTR_GEN_AI_RESPONSE_MODEL]: t.model ?? modelId(result.model, t.provider),
      ...usageAttrs(result.usage),
      "subagents.usage.cost": result.usage.cost,
      "subagents.turns": result.usage.turns,
      "subagents.tool_calls": result.toolCount,
      "subagents.task.name": outcome.name,
      "subagents.status": result.status,
      "subagents.runner": p?.runner,
      "subagents.sandbox": p?.sandbox,
      "subagents.runtime": p?.runtime,
      "subagents.isolation": p?.isolation ?? task?.isolation,
      "subagents.isolation.branch": result.isolation?.branch,
      "subagents.gate.passed": result.gate?.passed,
      "subagents.gate.attempts": result.gate?.attempts,
      "subagents.failed_models": result.failedModels?.length ? result.failedModels : undefined,
      ...(result.status === "error" ? { [ATTR_ERROR_TYPE]: result.errorCode ?? "_OTHER" } : {}),
      ...(this.tracing.content
        ? {
            [ATTR_GEN_AI_INPUT_MESSAGES]: messages("user", task?.prompt ?? ""),
            [ATTR_GEN_AI_OUTPUT_MESSAGES]: messages("assistant", result.output, result.stopReason),
          }
        : {}),
    };
    const span = this.span(
      this.callSpan,
      `invoke_agent ${outcome.agent}`,
      "internal",
      t.queuedMs,
      now,
      attrs,
      t.spanId,
    );
    span.events = t.events;
    if (result.status === "error") span.status = { code: "error", message: oneLine(result.error) };
    this.emit(span);
  }

  /** The call ended (`error`: its runner failed): its span, and the parent tool call's when a front named one. */
  end(error?: unknown): void {
    const now = this.tracing.now();
    const { count, failed, usage: u } = this.ended;
    const name = this.o.workflow ? `invoke_workflow ${this.o.workflow}` : "invoke_workflow";
    const span = this.span(this.toolSpan, name, "internal", this.startMs, now, {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_WORKFLOW,
      [ATTR_GEN_AI_AGENT_NAME]: this.o.workflow,
      "subagents.tasks": count,
      "subagents.tasks.failed": failed,
      "subagents.usage.input_tokens": u.input + u.cacheRead + u.cacheWrite,
      "subagents.usage.output_tokens": u.output,
      "subagents.usage.cache_read.input_tokens": u.cacheRead,
      "subagents.usage.cost": u.cost,
      ...(failed || error ? { [ATTR_ERROR_TYPE]: error ? "_OTHER" : "SUBAGENT_FAILED" } : {}),
    });
    span.spanId = this.callSpan;
    if (error) span.status = { code: "error", message: oneLine((error as Error).message) };
    else if (failed) span.status = { code: "error", message: `${failed} of ${count} tasks failed` };
    const spans = [span];
    if (this.o.tool) {
      const tool = this.span(undefined, `execute_tool ${this.o.tool.name}`, "internal", this.startMs, now, {
        [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
        [ATTR_GEN_AI_TOOL_NAME]: this.o.tool.name,
        [ATTR_GEN_AI_TOOL_CALL_ID]: this.o.tool.callId,
        [ATTR_GEN_AI_TOOL_TYPE]: "extension",
      });
      tool.spanId = this.toolSpan as string;
      tool.status = span.status;
      spans.push(tool);
    }
    if (this.sampled) this.tracing.export(spans);
  }

  private chatEnd(t: TaskTrace, ev: Extract<ChildEvent, { type: "assistant" }>, now: number): void {
    t.chat ??= { spanId: newSpanId(), startMs: Math.min(now, t.boundaryMs ?? now) };
    const span = this.closeChat(t, now);
    const provider = providerName(ev.provider);
    if (ev.provider) t.provider = ev.provider;
    if (ev.model) t.model = ev.model;
    span.name = ev.model ? `chat ${ev.model}` : "chat";
    Object.assign(span.attributes, {
      [ATTR_GEN_AI_PROVIDER_NAME]: provider,
      [ATTR_GEN_AI_REQUEST_MODEL]: ev.model,
      [ATTR_GEN_AI_RESPONSE_MODEL]: ev.model,
      [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: ev.stopReason ? [finishReason(ev.stopReason)] : undefined,
      ...usageAttrs({ ...ev.usage, turns: 1 }),
      "subagents.usage.cost": ev.usage.cost,
      ...(this.tracing.content ? { [ATTR_GEN_AI_OUTPUT_MESSAGES]: assistantMessage(ev) } : {}),
    });
    if (ev.stopReason === "error") {
      span.attributes[ATTR_ERROR_TYPE] = "_OTHER";
      span.status = { code: "error", message: oneLine(ev.errorMessage) };
    }
    this.emit(span);
    t.boundaryMs = now;
  }

  /** The open chat span of a task, ended now (its attributes are the caller's to add). */
  private closeChat(t: TaskTrace, now: number): Span {
    const chat = t.chat as Open;
    t.chat = undefined;
    const span = this.span(t.spanId, "chat", "client", chat.startMs, now, {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
    });
    span.spanId = chat.spanId;
    return span;
  }

  private toolEnd(t: TaskTrace, id: string, now: number, isError: boolean, result: string): void {
    const open = t.tools.get(id);
    if (!open) return;
    t.tools.delete(id);
    const span = this.span(t.spanId, `execute_tool ${open.name}`, "internal", open.startMs, now, {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
      [ATTR_GEN_AI_TOOL_NAME]: open.name,
      [ATTR_GEN_AI_TOOL_CALL_ID]: id,
      [ATTR_GEN_AI_TOOL_TYPE]: "function",
      ...(isError ? { [ATTR_ERROR_TYPE]: "tool_error" } : {}),
      ...(this.tracing.content
        ? { [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: content(open.args), [ATTR_GEN_AI_TOOL_CALL_RESULT]: content(result) }
        : {}),
    });
    span.spanId = open.spanId;
    if (isError) span.status = { code: "error" };
    this.emit(span);
  }

  private gateEnd(
    t: TaskTrace,
    ev: { attempt: number; passed: boolean; exitCode: number | null; timedOut: boolean },
    now: number,
  ): void {
    const open = t.gate ?? { spanId: newSpanId(), startMs: now, attempt: ev.attempt, command: "" };
    t.gate = undefined;
    const span = this.span(t.spanId, "gate", "internal", open.startMs, now, {
      "subagents.stage": "gate",
      "subagents.gate.attempt": ev.attempt,
      "subagents.gate.passed": ev.passed,
      "subagents.gate.timed_out": ev.timedOut || undefined,
      "subagents.gate.command": open.command ? sanitize(open.command) : undefined,
      [ATTR_PROCESS_EXIT_CODE]: ev.exitCode ?? undefined,
      ...(ev.passed ? {} : { [ATTR_ERROR_TYPE]: ev.timedOut ? "timeout" : "gate_failed" }),
    });
    span.spanId = open.spanId;
    if (!ev.passed) span.status = { code: "error", message: ev.timedOut ? "gate timed out" : "gate failed" };
    this.emit(span);
  }

  private span(
    parent: string | undefined,
    name: string,
    kind: SpanKind,
    startMs: number,
    endMs: number,
    attributes: Attrs,
    spanId = newSpanId(),
  ): Span {
    const remote = parent ? undefined : (this.o.parent ?? this.tracing.parent)?.spanId;
    const parentSpanId = parent ?? remote;
    return {
      traceId: this.traceId,
      spanId,
      ...(parentSpanId ? { parentSpanId } : {}),
      ...(remote ? { remoteParent: true } : {}),
      name,
      kind,
      startMs,
      endMs: Math.max(startMs, endMs),
      attributes,
      events: [],
      status: { code: "unset" },
      flags: this.flags,
      ...(this.state ? { traceState: this.state } : {}),
    };
  }

  private emit(span: Span): void {
    if (this.sampled) this.tracing.export([span]);
  }

  /** A parent that was not sampled (trace-flags 00) decided for the whole trace, as the SDKs' default parent-based
   *  sampler does: nothing of ours is recorded, and each child is handed the same decision. */
  private get sampled(): boolean {
    return (this.flags & 1) === 1;
  }
}

/** pi's stop reason as the conventions name finish reasons (stop, length, content_filter, tool_call, error): a
 *  backend groups by these, whatever agent reported them (pi says toolUse; an aborted turn did not finish). */
const FINISH: Record<string, string> = {
  stop: "stop",
  length: "length",
  toolUse: "tool_call",
  error: "error",
  aborted: "error",
};
const finishReason = (stop: string) => FINISH[stop] ?? stop;

/** Token usage as the conventions count it: input includes what was read from and written to the cache. */
function usageAttrs(u: Usage): Attrs {
  return {
    [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: u.input + u.cacheRead + u.cacheWrite,
    [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: u.output,
    [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: u.cacheRead,
    [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: u.cacheWrite,
  };
}

/** A model as its provider knows it: pi's `provider/id` without the provider. */
function modelId(model: string | undefined, provider: string | undefined): string | undefined {
  if (!model) return undefined;
  return provider && model.startsWith(`${provider}/`) ? model.slice(provider.length + 1) : model;
}

const oneLine = (text: string | undefined) => (text ? sanitize(text).split("\n")[0].slice(0, 500) : undefined);

/** Captured content: masked like every output we show or store, and cut at CONTENT_CHARS. */
const content = (text: string) => {
  const s = sanitize(text);
  return s.length > CONTENT_CHARS ? `${s.slice(0, CONTENT_CHARS)}…` : s;
};

/** gen_ai.input.messages / gen_ai.output.messages: one message of one text part, as JSON. */
function messages(role: "user" | "assistant", text: string, finish?: RunResult["stopReason"]): string {
  return JSON.stringify([
    {
      role,
      parts: [{ type: "text", content: content(text) }],
      ...(finish ? { finish_reason: finishReason(finish) } : {}),
    },
  ]);
}

function assistantMessage(ev: Extract<ChildEvent, { type: "assistant" }>): string {
  const parts: Record<string, unknown>[] = [];
  if (ev.text) parts.push({ type: "text", content: content(ev.text) });
  for (const c of ev.toolCalls) parts.push({ type: "tool_call", id: c.id, name: c.name, arguments: content(c.args) });
  return JSON.stringify([
    { role: "assistant", parts, ...(ev.stopReason ? { finish_reason: finishReason(ev.stopReason) } : {}) },
  ]);
}
