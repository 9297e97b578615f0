// A finished span as the owner builds it from what it already reads (call-trace.ts), and what a process's tracing
// gives a call (the exporter lives in the host layer: src/host/otlp-exporter.ts). Plain data, OTLP-shaped.
import type { TraceContext } from "./context.ts";

export type AttrValue = string | number | boolean | string[];
export type Attrs = Record<string, AttrValue | undefined>;

export type SpanKind = "internal" | "client" | "server";

export type SpanEvent = { name: string; timeMs: number; attributes?: Attrs };

export type Span = {
  traceId: string;
  spanId: string;
  /** None for the root of a trace we started. */
  parentSpanId?: string;
  name: string;
  kind: SpanKind;
  /** Epoch milliseconds, fractions kept (microseconds reach the exporter). */
  startMs: number;
  endMs: number;
  attributes: Attrs;
  events: SpanEvent[];
  /** unset: nothing said; error: the operation failed (message: why, in one line). */
  status: { code: "unset" | "ok" | "error"; message?: string };
  /** The parent's trace flags (01: sampled) and tracestate, kept on every span of the trace. */
  flags: number;
  /** Its parent is another process's span (TRACEPARENT, an MCP request's `_meta`). */
  remoteParent?: boolean;
  traceState?: string;
};

/** A process's tracing, when it is on (the OTEL_* switches): what every call of this process exports through. */
export type Tracing = {
  /** The trace a call joins when its front names none: TRACEPARENT / TRACESTATE of this process. */
  parent?: TraceContext;
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true: prompts, outputs and tool arguments go on spans. */
  content: boolean;
  /** The clock spans are timed by (epoch ms, fractions kept). */
  now(): number;
  /** Takes finished spans; they are sent in batches, never on the caller's time. */
  export(spans: Span[]): void;
  /** Sends what is left, waiting at most the exporter's bound (2 s): never throws, never waits longer. */
  flush(): Promise<void>;
};
