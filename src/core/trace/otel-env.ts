// The standard OpenTelemetry switches, read once from a process's environment: whether traces are exported at all
// (off unless OTEL_TRACES_EXPORTER names otlp or console, or an OTLP endpoint is set; OTEL_SDK_DISABLED wins), where
// and how (endpoint, headers, protocol, compression, timeout), what the resource says (OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES), whether message content is captured, and the trace a call joins (TRACEPARENT).
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import { parseTraceparent, type TraceContext } from "./context.ts";

export type OtlpProtocol = "http/protobuf" | "http/json";

export type TraceConfig = {
  /** OTLP/HTTP: where, how, with which headers; absent when only the console exporter is on. */
  otlp?: {
    url: string;
    protocol: OtlpProtocol;
    headers: Record<string, string>;
    gzip: boolean;
    /** The longest one export may take (OTEL_EXPORTER_OTLP_TIMEOUT, never more than EXPORT_BOUND_MS). */
    timeoutMs: number;
  };
  /** OTEL_TRACES_EXPORTER=console: each span as one OTLP/JSON line on stderr (stdout is the result's). */
  console: boolean;
  resource: Record<string, string>;
  content: boolean;
  parent?: TraceContext;
};

/** The most a run waits for its spans to leave (an exporter down or slow costs a run no more). */
export const EXPORT_BOUND_MS = 2000;
const DEFAULT_ENDPOINT = "http://localhost:4318";

type Env = Record<string, string | undefined>;

const truthy = (v: string | undefined) => v?.trim().toLowerCase() === "true";
const first = (env: Env, ...names: string[]) => {
  for (const n of names) {
    const v = env[n]?.trim();
    if (v) return v;
  }
  return undefined;
};

/** `k=v,k2=v2` (W3C baggage style, values percent-decoded): OTEL_EXPORTER_OTLP_HEADERS, OTEL_RESOURCE_ATTRIBUTES. */
export function parseKeyValues(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? "").split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    try {
      const key = decodeURIComponent(part.slice(0, eq).trim());
      const value = decodeURIComponent(part.slice(eq + 1).trim());
      if (key) out[key] = value;
    } catch {
      // a malformed percent-escape: that pair is skipped, as the SDKs do
    }
  }
  return out;
}

/**
 * What this environment asks for: a config (traces on), or null (off), with at most one line to warn about
 * (a protocol we do not speak, an exporter we do not have).
 */
export function readTraceConfig(env: Env, version: string): { config: TraceConfig | null; warning?: string } {
  if (truthy(env.OTEL_SDK_DISABLED)) return { config: null };
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const endpoint = first(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (exporters.includes("none")) return { config: null };
  const otlpOn = exporters.includes("otlp") || (exporters.length === 0 && !!endpoint);
  const consoleOn = exporters.includes("console");
  const unknown = exporters.filter((e) => e !== "otlp" && e !== "console");
  const warnings: string[] = [];
  if (unknown.length) warnings.push(`OTEL_TRACES_EXPORTER ${unknown.join(", ")} is not supported (otlp, console)`);
  let otlp: TraceConfig["otlp"];
  if (otlpOn) {
    const protocol = first(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf";
    const url = tracesUrl(env);
    const badUrl = urlProblem(url);
    if (badUrl) warnings.push(badUrl);
    else if (protocol === "http/protobuf" || protocol === "http/json")
      otlp = {
        url,
        protocol,
        headers: {
          ...parseKeyValues(env.OTEL_EXPORTER_OTLP_HEADERS),
          ...parseKeyValues(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
        },
        gzip: first(env, "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION") === "gzip",
        timeoutMs: timeoutOf(first(env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")),
      };
    else warnings.push(`OTEL_EXPORTER_OTLP_PROTOCOL ${protocol} is not supported (http/protobuf, http/json)`);
  }
  const warning = warnings.length ? `traces: ${warnings.join("; ")}` : undefined;
  if (!otlp && !consoleOn) return { config: null, ...(warning ? { warning } : {}) };
  // The resource: OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME over its service.name, else ours.
  const attrs = parseKeyValues(env.OTEL_RESOURCE_ATTRIBUTES);
  const resource: Record<string, string> = {
    ...attrs,
    [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME?.trim() || attrs[ATTR_SERVICE_NAME] || "subagents",
    [ATTR_SERVICE_VERSION]: attrs[ATTR_SERVICE_VERSION] || version,
  };
  const parent = parseTraceparent(env.TRACEPARENT, env.TRACESTATE);
  return {
    config: {
      ...(otlp ? { otlp } : {}),
      console: consoleOn,
      resource,
      content: truthy(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
      ...(parent ? { parent } : {}),
    },
    ...(warning ? { warning } : {}),
  };
}

/** OTEL_EXPORTER_OTLP_TIMEOUT in ms, at most EXPORT_BOUND_MS; not a positive number (-5, abc): the bound, as the
 *  SDKs fall back to their default (a negative timer had made Node print a TimeoutNegativeWarning). */
function timeoutOf(text: string | undefined): number {
  const ms = Number(text);
  return Number.isFinite(ms) && ms > 0 ? Math.min(EXPORT_BOUND_MS, ms) : EXPORT_BOUND_MS;
}

/** Why the traces endpoint cannot be posted to, said once at the start rather than at every export. */
function urlProblem(url: string): string | null {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // not a URL at all
  }
  if (parsed && (parsed.protocol === "http:" || parsed.protocol === "https:")) return null;
  const hint = /^[\w.-]+:\d+/.test(url) ? " (add http://)" : "";
  return `the OTLP endpoint ${url} is not an http(s) URL${hint}`;
}

/** The traces endpoint: the signal's own as given, else the base endpoint with /v1/traces appended. */
function tracesUrl(env: Env): string {
  const own = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (own) return own;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || DEFAULT_ENDPOINT;
  return `${base.replace(/\/+$/, "")}/v1/traces`;
}
