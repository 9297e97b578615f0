// W3C trace context (the `traceparent` / `tracestate` a CI job, a parent agent or an MCP client hands us, and the
// one each child gets for its own span): read, written and made here, nowhere else.

/** Where a span hangs in its trace: the trace, the parent span, whether it was sampled, the vendors' state. */
export type TraceContext = {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  spanId: string;
  /** The trace-flags byte (01: sampled). */
  flags: number;
  /** `tracestate`, passed on as it came (vendors' entries). */
  state?: string;
};

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** A `traceparent` value, or null when it is not one (a malformed parent starts a new trace, as the spec says). */
export function parseTraceparent(value: string | undefined, state?: string): TraceContext | null {
  const m = TRACEPARENT.exec(value?.trim().toLowerCase() ?? "");
  if (!m) return null;
  const [, version, traceId, spanId, flags, rest] = m;
  // Version ff is invalid; version 00 has nothing after its flags (a later version may, and is read as 00).
  if (version === "ff" || (version === "00" && rest)) return null;
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  const s = state?.trim();
  return { traceId, spanId, flags: Number.parseInt(flags, 16), ...(s ? { state: s } : {}) };
}

export const formatTraceparent = (c: Pick<TraceContext, "traceId" | "spanId" | "flags">): string =>
  `00-${c.traceId}-${c.spanId}-${c.flags.toString(16).padStart(2, "0")}`;

function randomHex(bytes: number): string {
  const b = new Uint8Array(bytes);
  // All zero is invalid: never kept (one chance in 2^64 or more).
  do crypto.getRandomValues(b);
  while (b.every((x) => x === 0));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

export const newTraceId = (): string => randomHex(16);
export const newSpanId = (): string => randomHex(8);

/** FNV-1a, 32 bits, from a given offset (no crypto module: the child extension shares this file). */
function fnv(text: string, offset: number): number {
  let h = offset;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * The span id of a task's invoke_agent span, made from its trace and its session: the owner names the span so, and
 * a kept child (one pi process running task after task, core/run/process/pool.ts) makes each task's TRACEPARENT
 * from the session it switches to, with nothing sent to it. Session ids are random, so the ids are as unique as
 * random ones within a trace.
 */
export function taskSpanId(traceId: string, sessionId: string): string {
  const text = `${traceId}/${sessionId}`;
  const hex = [fnv(text, 0x811c9dc5), fnv(text, 0x050c5d1f)].map((h) => h.toString(16).padStart(8, "0")).join("");
  return /^0+$/.test(hex) ? "0000000000000001" : hex;
}

/** The TRACEPARENT of a session's task, in the trace `current` (the process's) belongs to; null when it is none. */
export function sessionTraceparent(current: string | undefined, sessionId: string): string | null {
  const c = parseTraceparent(current);
  return c ? formatTraceparent({ ...c, spanId: taskSpanId(c.traceId, sessionId) }) : null;
}

/** The environment a process hands its trace on with (a child's, a hook's). */
export function traceEnv(c: TraceContext): { TRACEPARENT: string; TRACESTATE?: string } {
  return { TRACEPARENT: formatTraceparent(c), ...(c.state ? { TRACESTATE: c.state } : {}) };
}
