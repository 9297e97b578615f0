// An OTLP/HTTP trace receiver on 127.0.0.1 for tests: it decodes what an exporter posts to /v1/traces (binary
// protobuf with protobufjs and the message definitions below, field numbers as opentelemetry-proto gives them; or
// OTLP/JSON) into flat spans. It can also refuse every request or never answer, as a broken collector would.
import { createServer, type Server } from "node:http";
import { gunzipSync } from "node:zlib";
import protobuf from "protobufjs";

const PROTO = `
syntax = "proto3";
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; fixed32 flags = 16;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10; repeated Event events = 11;
  uint32 dropped_events_count = 12; Status status = 15;
}
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
`;

const Request = protobuf.parse(PROTO, { keepCase: false }).root.lookupType("ExportTraceServiceRequest");

export type Attr = string | number | boolean | Attr[];

/** One span as received, ids in hex, times in nanoseconds (as bigint), attributes as plain values. */
export type ReceivedSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  flags: number;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, Attr>;
  events: { name: string; timeNs: bigint; attributes: Record<string, Attr> }[];
  status: { code: number; message?: string };
  resource: Record<string, Attr>;
  scope: { name: string; version: string };
  /** How it came: "protobuf" or "json". */
  encoding: string;
};

export type OtlpReceiver = {
  url: string;
  spans: ReceivedSpan[];
  /** Every request's headers (lowercased names), in order. */
  requests: { headers: Record<string, string | string[] | undefined>; encoding: string }[];
  /** "ok" answers 200; "refuse" answers 503; "hang" never answers. */
  mode: "ok" | "refuse" | "hang";
  /** Resolves once a span matching `pick` arrived (rejects after `ms`, naming what arrived). */
  waitFor(pick: (s: ReceivedSpan) => boolean, ms?: number): Promise<ReceivedSpan>;
  close(): Promise<void>;
};

const hex = (b: Uint8Array | string | undefined) =>
  b === undefined ? "" : typeof b === "string" ? b : Buffer.from(b).toString("hex");

type AnyValueJson = Record<string, unknown>;

function value(v: AnyValueJson | undefined): Attr {
  if (!v) return "";
  if (v.stringValue !== undefined) return v.stringValue as string;
  if (v.boolValue !== undefined) return v.boolValue as boolean;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return Number(v.doubleValue);
  if (v.arrayValue) return ((v.arrayValue as { values?: AnyValueJson[] }).values ?? []).map(value);
  return "";
}

const attrs = (list: { key: string; value?: AnyValueJson }[] | undefined): Record<string, Attr> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));

/** Flattens an ExportTraceServiceRequest (protobufjs's object form or OTLP/JSON: the same field names). */
function flatten(req: any, encoding: string): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of req.resourceSpans ?? [])
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        out.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          ...(hex(s.parentSpanId) ? { parentSpanId: hex(s.parentSpanId) } : {}),
          ...(s.traceState ? { traceState: s.traceState } : {}),
          flags: Number(s.flags ?? 0),
          name: s.name,
          kind: Number(s.kind ?? 0),
          startNs: BigInt(s.startTimeUnixNano),
          endNs: BigInt(s.endTimeUnixNano),
          attributes: attrs(s.attributes),
          events: (s.events ?? []).map((e: { name: string; timeUnixNano: string; attributes?: [] }) => ({
            name: e.name,
            timeNs: BigInt(e.timeUnixNano),
            attributes: attrs(e.attributes),
          })),
          status: { code: Number(s.status?.code ?? 0), ...(s.status?.message ? { message: s.status.message } : {}) },
          resource: attrs(rs.resource?.attributes),
          scope: { name: ss.scope?.name ?? "", version: ss.scope?.version ?? "" },
          encoding,
        });
  return out;
}

/** Decodes one request body as its Content-Type says. */
export function decodeTraces(body: Uint8Array, contentType: string): ReceivedSpan[] {
  if (contentType.startsWith("application/json")) return flatten(JSON.parse(Buffer.from(body).toString()), "json");
  const msg = Request.decode(body);
  return flatten(Request.toObject(msg, { longs: String, defaults: false }), "protobuf");
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const waiters = new Set<() => void>();
  const hanging = new Set<() => void>();
  const rec: OtlpReceiver = {
    url: "",
    spans: [],
    requests: [],
    mode: "ok",
    waitFor(pick, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = rec.spans.find(pick);
          if (!found) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such span in ${ms} ms; received: ${rec.spans.map((s) => s.name).join(", ")}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const end of hanging) end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: Uint8Array = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
      const type = String(req.headers["content-type"] ?? "");
      rec.requests.push({ headers: req.headers, encoding: type });
      if (rec.mode === "hang") {
        hanging.add(() => res.destroy());
        return;
      }
      if (rec.mode === "refuse") {
        res.writeHead(503).end("collector overloaded");
        return;
      }
      try {
        rec.spans.push(...decodeTraces(body, type));
      } catch (err) {
        res.writeHead(400).end(String(err));
        return;
      }
      res.writeHead(200, { "Content-Type": type || "application/x-protobuf" }).end();
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the OTLP receiver has no port");
  rec.url = `http://127.0.0.1:${address.port}`;
  return rec;
}

/** The spans of one trace as a tree of names, children in start order: `name\n  child\n  …`. */
export function spanTree(spans: ReceivedSpan[], root: ReceivedSpan, depth = 0): string {
  const kids = spans.filter((s) => s.parentSpanId === root.spanId).sort((a, b) => (a.startNs < b.startNs ? -1 : 1));
  return [`${"  ".repeat(depth)}${root.name}`, ...kids.map((k) => spanTree(spans, k, depth + 1))].join("\n");
}
