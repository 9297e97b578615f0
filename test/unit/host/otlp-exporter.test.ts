// The exporter a traced process sends its spans through, against the test's OTLP receiver on 127.0.0.1: both
// encodings, headers and gzip, batches, the 2 s bound when the collector never answers, and one warning line for
// a collector that is down or refuses, whatever happens after.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createServer } from "node:net";
import type { TraceConfig } from "../../../src/core/trace/otel-env.ts";
import type { Span } from "../../../src/core/trace/span.ts";
import { createTracing, type TracingDeps } from "../../../src/host/otlp-exporter.ts";
import { type OtlpReceiver, startOtlpReceiver } from "../../support/otlp-receiver.ts";

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

const span = (i: number): Span => ({
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: (i + 1).toString(16).padStart(16, "0"),
  name: `span ${i}`,
  kind: "internal",
  startMs: 1_765_000_000_000 + i,
  endMs: 1_765_000_000_010 + i,
  attributes: { i },
  events: [],
  status: { code: "unset" },
  flags: 1,
});

function config(url: string, over: Partial<NonNullable<TraceConfig["otlp"]>> = {}): TraceConfig {
  return {
    otlp: { url, protocol: "http/protobuf", headers: {}, gzip: false, timeoutMs: 2000, ...over },
    console: false,
    resource: { "service.name": "exporter-test" },
    content: false,
  };
}

function deps() {
  const warnings: string[] = [];
  const lines: string[] = [];
  const d: TracingDeps = {
    warn: (l) => warnings.push(l),
    write: (l) => lines.push(l),
    fetch: (url, init) => fetch(url, init),
    now: () => Date.now(),
  };
  return { d, warnings, lines };
}

test("spans reach the collector in both encodings, with the headers given and gzipped when asked", async () => {
  receiver.mode = "ok";
  for (const [protocol, gzip] of [
    ["http/protobuf", false],
    ["http/json", true],
  ] as const) {
    const { d, warnings } = deps();
    const tracing = createTracing(
      config(`${receiver.url}/v1/traces`, { protocol, gzip, headers: { "x-api-key": "k1" } }),
      "1.2.3",
      d,
    );
    const before = receiver.spans.length;
    tracing.export([span(0), span(1)]);
    // Two spans wait for a batch or the flush.
    await Bun.sleep(50);
    expect(receiver.spans.length).toBe(before);
    await tracing.flush();
    const got = receiver.spans.slice(before);
    expect(got.map((s) => s.name)).toEqual(["span 0", "span 1"]);
    expect(got[0].scope).toEqual({ name: "subagents", version: "1.2.3" });
    const req = receiver.requests.at(-1)!;
    expect(req.headers["x-api-key"]).toBe("k1");
    expect(req.headers["content-type"]).toBe(protocol === "http/json" ? "application/json" : "application/x-protobuf");
    expect(req.headers["content-encoding"]).toBe(gzip ? "gzip" : undefined);
    expect(warnings).toEqual([]);
  }
});

test("a full batch leaves at once, the rest with the flush", async () => {
  receiver.mode = "ok";
  const before = receiver.requests.length;
  const { d } = deps();
  const tracing = createTracing(config(`${receiver.url}/v1/traces`), "1", d);
  tracing.export(Array.from({ length: 600 }, (_, i) => span(i)));
  await receiver.waitFor((s) => s.name === "span 511");
  expect(receiver.requests.length - before).toBe(1);
  await tracing.flush();
  expect(receiver.requests.length - before).toBe(2);
  expect(receiver.spans.some((s) => s.name === "span 599")).toBe(true);
});

test("a collector that is down, refuses or never answers: the flush returns within 2 s, one warning in all", async () => {
  // A port nothing listens on: taken, then freed.
  const free = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
  const down = deps();
  const t1 = createTracing(config(`http://127.0.0.1:${free}/v1/traces`), "1", down.d);
  t1.export([span(0)]);
  await t1.flush();
  t1.export([span(1)]);
  await t1.flush();
  expect(down.warnings).toHaveLength(1);
  expect(down.warnings[0]).toMatch(
    new RegExp(
      `^traces not exported to http://127.0.0.1:${free}/v1/traces: .*\\(further failures are not reported\\)$`,
    ),
  );
  // The error's first sentence: Bun's goes on with advice about fetch() ("Is the computer able to access the url?").
  expect(down.warnings[0]).not.toMatch(/Is the computer|verbose: true/);

  receiver.mode = "refuse";
  const refused = deps();
  const t2 = createTracing(config(`${receiver.url}/v1/traces`), "1", refused.d);
  t2.export([span(0)]);
  await t2.flush();
  expect(refused.warnings).toEqual([
    `traces not exported to ${receiver.url}/v1/traces: HTTP 503 Service Unavailable (further failures are not reported)`,
  ]);

  receiver.mode = "hang";
  const slow = deps();
  const t3 = createTracing(config(`${receiver.url}/v1/traces`), "1", slow.d);
  t3.export([span(0)]);
  const started = performance.now();
  await t3.flush();
  const took = performance.now() - started;
  expect(took).toBeGreaterThan(1500);
  // The bound is 2 s; a busy machine may add scheduling delay, never another wait.
  expect(took).toBeLessThan(3500);
  expect(slow.warnings).toHaveLength(1);
  expect(slow.warnings[0]).toContain("no answer in 2000 ms");
  receiver.mode = "ok";
});

test("the console exporter writes each span as one OTLP/JSON line (and sends nothing)", async () => {
  const { d, lines } = deps();
  const before = receiver.requests.length;
  const tracing = createTracing({ console: true, resource: { "service.name": "c" }, content: false }, "1", d);
  tracing.export([span(0), span(1)]);
  await tracing.flush();
  expect(lines).toHaveLength(2);
  expect(JSON.parse(lines[0]).resourceSpans[0].scopeSpans[0].spans[0].name).toBe("span 0");
  expect(receiver.requests.length).toBe(before);
});
