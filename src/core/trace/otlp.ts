// OTLP/HTTP trace payloads (an ExportTraceServiceRequest of opentelemetry-proto's collector/trace/v1) in both
// encodings the exporter speaks: binary protobuf (http/protobuf, the default) and OTLP/JSON (http/json: proto3's
// JSON mapping with hex ids, integer enums and 64-bit integers as decimal strings). Only what a span of ours holds
// is written: one resource, one scope, spans with attributes, events and a status.
import type { AttrValue, Attrs, Span, SpanEvent } from "./span.ts";

/** Who produced the spans: the resource (service.name…) and the instrumentation scope. */
export type OtlpSource = { resource: Attrs; scope: { name: string; version: string } };

const KIND = { internal: 1, server: 2, client: 3 } as const;
const STATUS = { unset: 0, ok: 1, error: 2 } as const;

/** Epoch milliseconds (fractions kept to the microsecond) as nanoseconds. */
export const unixNano = (ms: number): bigint => BigInt(Math.round(ms * 1000)) * 1000n;

/** Span.flags: the W3C trace flags, and whether the parent is remote (bit 9), saying that it is known (bit 8). */
const spanFlags = (s: Span) => (s.flags & 0xff) | 0x100 | (s.remoteParent ? 0x200 : 0);

const defined = (attrs: Attrs): [string, AttrValue][] =>
  Object.entries(attrs).filter((e): e is [string, AttrValue] => e[1] !== undefined);

// ---- protobuf ----------------------------------------------------------------------------------------------------

const utf8 = new TextEncoder();

/** A growing buffer of one message's bytes. */
class Pb {
  private buf = new Uint8Array(256);
  private len = 0;

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  private byte(b: number): void {
    this.room(1);
    this.buf[this.len++] = b;
  }

  private varint(v: number | bigint): void {
    let n = BigInt.asUintN(64, BigInt(v));
    while (n >= 0x80n) {
      this.byte(Number(n & 0x7fn) | 0x80);
      n >>= 7n;
    }
    this.byte(Number(n));
  }

  private tag(field: number, wire: 0 | 1 | 2 | 5): void {
    this.varint((field << 3) | wire);
  }

  bytes(field: number, b: Uint8Array): this {
    this.tag(field, 2);
    this.varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }

  /** A string field; proto3 leaves an empty one out. */
  string(field: number, s: string | undefined): this {
    return s ? this.bytes(field, utf8.encode(s)) : this;
  }

  uint(field: number, v: number | bigint): this {
    if (v === 0 || v === 0n) return this;
    this.tag(field, 0);
    this.varint(v);
    return this;
  }

  /** A varint field written even when zero (a oneof member must be present). */
  int(field: number, v: number | bigint): this {
    this.tag(field, 0);
    this.varint(v);
    return this;
  }

  bool(field: number, v: boolean): this {
    this.tag(field, 0);
    this.varint(v ? 1 : 0);
    return this;
  }

  double(field: number, v: number): this {
    this.tag(field, 1);
    this.room(8);
    new DataView(this.buf.buffer).setFloat64(this.len, v, true);
    this.len += 8;
    return this;
  }

  fixed64(field: number, v: bigint): this {
    this.tag(field, 1);
    this.room(8);
    new DataView(this.buf.buffer).setBigUint64(this.len, v, true);
    this.len += 8;
    return this;
  }

  fixed32(field: number, v: number): this {
    this.tag(field, 5);
    this.room(4);
    new DataView(this.buf.buffer).setUint32(this.len, v, true);
    this.len += 4;
    return this;
  }

  message(field: number, m: Pb): this {
    return this.bytes(field, m.done());
  }

  done(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

const hexBytes = (hex: string): Uint8Array => Uint8Array.from(hex.match(/../g) ?? [], (h) => Number.parseInt(h, 16));

function pbValue(v: AttrValue): Pb {
  const m = new Pb();
  if (typeof v === "string") return m.bytes(1, utf8.encode(v));
  if (typeof v === "boolean") return m.bool(2, v);
  if (typeof v === "number") return Number.isSafeInteger(v) ? m.int(3, v) : m.double(4, v);
  const list = new Pb();
  for (const s of v) list.message(1, pbValue(s));
  return m.message(5, list);
}

function pbAttrs(m: Pb, field: number, attrs: Attrs): void {
  for (const [k, v] of defined(attrs)) m.message(field, new Pb().string(1, k).message(2, pbValue(v)));
}

function pbEvent(e: SpanEvent): Pb {
  const m = new Pb().fixed64(1, unixNano(e.timeMs)).string(2, e.name);
  pbAttrs(m, 3, e.attributes ?? {});
  return m;
}

function pbSpan(s: Span): Pb {
  const m = new Pb().bytes(1, hexBytes(s.traceId)).bytes(2, hexBytes(s.spanId)).string(3, s.traceState);
  if (s.parentSpanId) m.bytes(4, hexBytes(s.parentSpanId));
  m.string(5, s.name).uint(6, KIND[s.kind]);
  m.fixed64(7, unixNano(s.startMs)).fixed64(8, unixNano(s.endMs));
  pbAttrs(m, 9, s.attributes);
  for (const e of s.events) m.message(11, pbEvent(e));
  const status = new Pb().string(2, s.status.message).uint(3, STATUS[s.status.code]);
  m.message(15, status);
  return m.fixed32(16, spanFlags(s));
}

/** ExportTraceServiceRequest, binary protobuf (Content-Type: application/x-protobuf). */
export function encodeProtobuf(spans: Span[], src: OtlpSource): Uint8Array {
  const resource = new Pb();
  pbAttrs(resource, 1, src.resource);
  const scopeSpans = new Pb().message(1, new Pb().string(1, src.scope.name).string(2, src.scope.version));
  for (const s of spans) scopeSpans.message(2, pbSpan(s));
  const resourceSpans = new Pb().message(1, resource).message(2, scopeSpans);
  return new Pb().message(1, resourceSpans).done();
}

// ---- JSON --------------------------------------------------------------------------------------------------------

type JsonValue = Record<string, unknown>;

function jsonValue(v: AttrValue): JsonValue {
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  if (typeof v === "number") return Number.isSafeInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  return { arrayValue: { values: v.map(jsonValue) } };
}

const jsonAttrs = (attrs: Attrs) => defined(attrs).map(([key, v]) => ({ key, value: jsonValue(v) }));

function jsonSpan(s: Span): JsonValue {
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    ...(s.traceState ? { traceState: s.traceState } : {}),
    ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
    flags: spanFlags(s),
    name: s.name,
    kind: KIND[s.kind],
    startTimeUnixNano: String(unixNano(s.startMs)),
    endTimeUnixNano: String(unixNano(s.endMs)),
    attributes: jsonAttrs(s.attributes),
    events: s.events.map((e) => ({
      timeUnixNano: String(unixNano(e.timeMs)),
      name: e.name,
      attributes: jsonAttrs(e.attributes ?? {}),
    })),
    status: { code: STATUS[s.status.code], ...(s.status.message ? { message: s.status.message } : {}) },
  };
}

/** ExportTraceServiceRequest as OTLP/JSON (Content-Type: application/json). */
export function encodeJson(spans: Span[], src: OtlpSource): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: jsonAttrs(src.resource) },
        scopeSpans: [{ scope: src.scope, spans: spans.map(jsonSpan) }],
      },
    ],
  });
}
