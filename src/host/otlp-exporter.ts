// A process's tracing (core/trace/span.ts Tracing) when the OTEL_* switches turn it on: finished spans are queued
// and sent over OTLP/HTTP in batches (at 512 spans, or 5 s after the first one waiting), and flushed when a call
// ends, never for longer than EXPORT_BOUND_MS. An exporter that is down, slow or refuses costs a run at most that
// and one warning line for the life of the process; nothing here throws into a run.
import { encodeJson, encodeProtobuf, type OtlpSource } from "../core/trace/otlp.ts";
import { EXPORT_BOUND_MS, readTraceConfig, type TraceConfig } from "../core/trace/otel-env.ts";
import type { Span, Tracing } from "../core/trace/span.ts";
import pkg from "../../package.json" with { type: "json" };

const BATCH = 512;
/** Spans waiting beyond this are dropped (and counted in the warning): memory stays bounded whatever a run does. */
const MAX_QUEUE = 4096;
const DELAY_MS = 5000;

export type TracingDeps = {
  /** Where the one warning line goes (stderr unless the front has a better place). */
  warn: (line: string) => void;
  /** Where the console exporter writes (stderr: stdout carries results and protocol). */
  write: (line: string) => void;
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  now: () => number;
};

const defaultDeps = (): TracingDeps => ({
  warn: (line) => process.stderr.write(`subagents: ${line}\n`),
  write: (line) => process.stderr.write(`${line}\n`),
  fetch: (url, init) => fetch(url, init),
  now: () => performance.timeOrigin + performance.now(),
});

export type ProcessTracing = Tracing & {
  /** Sends the one warning elsewhere from now on (pi's notifications once a session has a UI). */
  warnTo(fn: (line: string) => void): void;
};

let cached: { tracing: ProcessTracing | undefined } | undefined;

/** This process's tracing, made once from its environment (undefined: off). Every front's engine takes this one. */
export function processTracing(env: Record<string, string | undefined>): ProcessTracing | undefined {
  if (!cached) {
    const { config, warning } = readTraceConfig(env, pkg.version);
    const deps = defaultDeps();
    if (warning) deps.warn(warning);
    cached = { tracing: config ? createTracing(config, pkg.version, deps, !!warning) : undefined };
  }
  return cached.tracing;
}

export function createTracing(config: TraceConfig, version: string, deps: TracingDeps, warned = false): ProcessTracing {
  const src: OtlpSource = { resource: config.resource, scope: { name: "subagents", version } };
  const queue: Span[] = [];
  let dropped = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const inFlight = new Set<{ done: Promise<void>; abort: AbortController }>();
  let warn = deps.warn;

  const warnOnce = (why: string) => {
    if (warned) return;
    warned = true;
    warn(`traces not exported to ${config.otlp?.url}: ${why} (further failures are not reported)`);
  };

  const send = (spans: Span[]) => {
    const otlp = config.otlp;
    if (!otlp || !spans.length) return;
    const json = otlp.protocol === "http/json";
    const body: Uint8Array | string = json ? encodeJson(spans, src) : encodeProtobuf(spans, src);
    const headers: Record<string, string> = {
      ...otlp.headers,
      "Content-Type": json ? "application/json" : "application/x-protobuf",
      ...(otlp.gzip ? { "Content-Encoding": "gzip" } : {}),
    };
    const abort = new AbortController();
    const giveUp = setTimeout(() => abort.abort(new Error(`no answer in ${otlp.timeoutMs} ms`)), otlp.timeoutMs);
    giveUp.unref?.();
    const entry = {
      abort,
      done: (otlp.gzip ? gzip(body) : Promise.resolve(body))
        .then((payload) => deps.fetch(otlp.url, { method: "POST", headers, body: payload, signal: abort.signal }))
        .then(async (res) => {
          // The body is read (and dropped) so the connection is free again.
          await res.arrayBuffer().catch(() => {});
          if (!res.ok) warnOnce(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`);
        })
        .catch((err: unknown) => warnOnce(reason(err)))
        .finally(() => {
          clearTimeout(giveUp);
          inFlight.delete(entry);
        }),
    };
    inFlight.add(entry);
  };

  const sendQueued = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    while (queue.length) send(queue.splice(0, BATCH));
    if (dropped) {
      warnOnce(`${dropped} spans dropped: more than ${MAX_QUEUE} were waiting`);
      dropped = 0;
    }
  };

  return {
    ...(config.parent ? { parent: config.parent } : {}),
    content: config.content,
    now: deps.now,
    export(spans) {
      if (config.console) for (const s of spans) deps.write(encodeJson([s], src));
      if (!config.otlp) return;
      for (const s of spans) {
        if (queue.length >= MAX_QUEUE) dropped++;
        else queue.push(s);
      }
      if (queue.length >= BATCH) sendQueued();
      else if (!timer && queue.length) {
        timer = setTimeout(sendQueued, DELAY_MS);
        timer.unref?.();
      }
    },
    async flush() {
      sendQueued();
      if (!inFlight.size) return;
      const all = () => Promise.all([...inFlight].map((e) => e.done));
      await within(all(), EXPORT_BOUND_MS);
      // Whatever is still on its way is given up (and said, once): nothing of ours keeps a process waiting.
      for (const e of inFlight) e.abort.abort(new Error(`no answer in ${EXPORT_BOUND_MS} ms`));
      await within(all(), 100);
    },
    warnTo(fn) {
      warn = fn;
    },
  };
}

/** gzip by the runtime's CompressionStream (Bun and Node alike): no module to load while traces are off. */
async function gzip(body: Uint8Array | string): Promise<Uint8Array> {
  const stream = new Blob([body]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Waits for `p`, but no longer than `ms` (a timer that keeps no process alive). */
async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref?.();
  });
  await Promise.race([p, late]);
  clearTimeout(timer);
}

/** One line for why a request failed: the system's code (ECONNREFUSED…) when there is one. */
function reason(err: unknown): string {
  const e = err as { code?: string; cause?: { code?: string; message?: string }; message?: string; name?: string };
  const code = e?.cause?.code ?? e?.code;
  // Its first sentence: Bun goes on with advice about fetch() options nobody here passes.
  const msg = (e?.cause?.message ?? e?.message ?? String(err)).split("\n")[0].replace(/(\.) [A-Z].*$/, "$1");
  if (code && !msg.includes(code)) return `${code} ${msg}`;
  return msg;
}
