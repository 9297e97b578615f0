// One MCP connection (docs/mcp.md "Protocol"). A request whose `_meta` names a revision is served by that revision's
// rules (2026-07-28: capabilities per request, `resultType` on every result, a tool's questions as an
// `input_required` result the client answers by retrying). A client that opens with `initialize` gets the 2025
// rules: capabilities from `initialize`, and a tool's `input_required` is fulfilled here by pushing its requests
// (`elicitation/create`, `roots/list`) to the client and running the tool again with the answers, within the same
// request. Either way a tool handler is written once. `notifications/cancelled` aborts a request's signal; nothing
// is sent for a cancelled request.
import type { RequestStateCodec } from "./request-state.ts";
import {
  ERR,
  type Id,
  type InputRequired,
  isInputRequired,
  LEGACY_VERSIONS,
  type Message,
  META,
  MODERN_VERSIONS,
  type ToolResult,
  WireError,
} from "./wire.ts";

export type ClientCaps = { elicitation: boolean; roots: boolean };

/** What a tool handler gets for one round of its call. */
export type ToolContext = {
  caps: ClientCaps;
  progressToken?: Id;
  /** The client's answers to the previous round's input requests, by key (untrusted input). */
  inputResponses: Record<string, unknown>;
  /** The previous round's `requestState` payload, verified (absent on a first round). */
  requestState?: unknown;
  signal: AbortSignal;
  notify(method: string, params: Record<string, unknown>): void;
  /** The client's trace context (`_meta.traceparent`, `_meta.tracestate`): where the call's trace hangs. */
  trace?: { traceparent?: string; tracestate?: string };
};

/** `until`: on a 2025 connection, resolving it stops waiting for the pushed requests and runs the tool again. */
export type ToolOutcome = ToolResult | (InputRequired & { until?: Promise<unknown> });

export type ToolDef = {
  name: string;
  description: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  handle(args: unknown, ctx: ToolContext): Promise<ToolOutcome>;
};

export type SessionOptions = {
  info: { name: string; version: string };
  instructions: string;
  tools: ToolDef[];
  state: RequestStateCodec<unknown>;
  write(message: Message): void;
};

const CAPABILITIES = { tools: {} };

function capsOf(declared: unknown): ClientCaps {
  const c = (declared ?? {}) as { elicitation?: { form?: unknown; url?: unknown }; roots?: unknown };
  // An elicitation capability that names modes must name forms; an empty one means forms (2025-06-18).
  const e = c.elicitation;
  return { elicitation: !!e && (e.form !== undefined || e.url === undefined), roots: !!c.roots };
}

export class McpSession {
  private readonly running = new Map<Id, AbortController>();
  private readonly pending = new Map<Id, { resolve(r: unknown): void; reject(e: Error): void }>();
  private readonly tools: Map<string, ToolDef>;
  private initialized: unknown;
  private seq = 0;

  constructor(private readonly o: SessionOptions) {
    this.tools = new Map(o.tools.map((t) => [t.name, t]));
  }

  /** One line from the client. */
  receive(line: string): void {
    if (!line.trim()) return;
    let m: Message;
    try {
      m = JSON.parse(line) as Message;
    } catch {
      return this.o.write({ jsonrpc: "2.0", id: null, error: { code: ERR.parse, message: "Parse error" } });
    }
    if (!m || typeof m !== "object" || Array.isArray(m))
      return this.o.write({
        jsonrpc: "2.0",
        id: null,
        error: { code: ERR.invalidRequest, message: "Invalid request" },
      });
    if (m.method === undefined) return this.answered(m);
    if (m.id === undefined || m.id === null) return this.notified(m);
    void this.request(m.id, m.method, m.params ?? {});
  }

  /** The client is gone: every request stops, every question to it is withdrawn. */
  close(): void {
    for (const c of this.running.values()) c.abort(new Error("the MCP client closed the connection"));
    for (const p of this.pending.values()) p.reject(new Error("the MCP client closed the connection"));
    this.pending.clear();
  }

  private notified(m: Message): void {
    if (m.method !== "notifications/cancelled") return;
    const id = m.params?.requestId as Id | undefined;
    if (id !== undefined) this.running.get(id)?.abort(m.params?.reason ?? new Error("cancelled by the MCP client"));
  }

  private answered(m: Message): void {
    const p = m.id === undefined || m.id === null ? undefined : this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id!);
    if (m.error) p.reject(new Error(m.error.message));
    else p.resolve(m.result ?? {});
  }

  private async request(id: Id, method: string, params: Record<string, unknown>): Promise<void> {
    const control = new AbortController();
    this.running.set(id, control);
    try {
      const result = await this.dispatch(method, params, control.signal);
      if (!control.signal.aborted) this.o.write({ jsonrpc: "2.0", id, result });
    } catch (err) {
      if (control.signal.aborted) return;
      const e = err instanceof WireError ? err : new WireError(ERR.internal, (err as Error).message);
      this.o.write({
        jsonrpc: "2.0",
        id,
        error: { code: e.code, message: e.message, ...(e.data ? { data: e.data } : {}) },
      });
    } finally {
      this.running.delete(id);
    }
  }

  private async dispatch(method: string, params: Record<string, unknown>, signal: AbortSignal) {
    const meta = (params._meta ?? {}) as Record<string, unknown>;
    const version = meta[META.protocolVersion];
    const modern = typeof version === "string";
    if (modern && !MODERN_VERSIONS.includes(version))
      throw new WireError(ERR.unsupportedVersion, "Unsupported protocol version", {
        supported: MODERN_VERSIONS,
        requested: version,
      });
    const result = await this.method(method, params, meta, modern, signal);
    return modern
      ? { ...result, resultType: result.resultType ?? "complete", _meta: { [META.serverInfo]: this.o.info } }
      : result;
  }

  private async method(
    method: string,
    params: Record<string, unknown>,
    meta: Record<string, unknown>,
    modern: boolean,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    switch (method) {
      case "initialize": {
        this.initialized = params.capabilities;
        const asked = params.protocolVersion as string;
        return {
          protocolVersion: LEGACY_VERSIONS.includes(asked) ? asked : LEGACY_VERSIONS[0],
          capabilities: CAPABILITIES,
          serverInfo: this.o.info,
          instructions: this.o.instructions,
        };
      }
      case "server/discover":
        return {
          supportedVersions: MODERN_VERSIONS,
          capabilities: CAPABILITIES,
          instructions: this.o.instructions,
          ttlMs: 0,
          cacheScope: "private",
        };
      case "ping":
        return {};
      case "tools/list":
        return {
          tools: [...this.tools.values()].map((t) => ({
            name: t.name,
            description: t.description,
            inputSchema: t.inputSchema,
            ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
          })),
          ...(modern ? { ttlMs: 0, cacheScope: "private" } : {}),
        };
      case "tools/call":
        return this.callTool(params, meta, modern, signal);
      default:
        throw new WireError(ERR.methodNotFound, `Method not found: ${method}`);
    }
  }

  private async callTool(
    params: Record<string, unknown>,
    meta: Record<string, unknown>,
    modern: boolean,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const tool = this.tools.get(String(params.name));
    if (!tool) throw new WireError(ERR.invalidParams, `Unknown tool: ${String(params.name)}`);
    let requestState: unknown;
    if (typeof params.requestState === "string") {
      requestState = this.o.state.verify(params.requestState);
      if (requestState === null) throw new WireError(ERR.invalidParams, "Invalid or expired requestState");
    }
    const ctx: ToolContext = {
      caps: capsOf(modern ? meta[META.clientCapabilities] : this.initialized),
      progressToken: meta.progressToken as Id | undefined,
      inputResponses: (params.inputResponses ?? {}) as Record<string, unknown>,
      requestState,
      signal,
      trace: {
        ...(typeof meta.traceparent === "string" ? { traceparent: meta.traceparent } : {}),
        ...(typeof meta.tracestate === "string" ? { tracestate: meta.tracestate } : {}),
      },
      notify: (method, p) => {
        if (!signal.aborted) this.o.write({ jsonrpc: "2.0", method, params: p });
      },
    };
    for (;;) {
      const r = await tool.handle(params.arguments ?? {}, ctx);
      if (!isInputRequired(r)) return r;
      const { until, ...wire } = r;
      if (modern) return wire;
      // A 2025 client takes no input_required: its requests go to the client here, then the tool runs again.
      ctx.inputResponses = await this.fulfil(wire, signal, until);
      ctx.requestState = wire.requestState ? this.o.state.verify(wire.requestState) : undefined;
    }
  }

  private async fulfil(r: InputRequired, signal: AbortSignal, until?: Promise<unknown>) {
    const answers: Record<string, unknown> = {};
    const stop = new AbortController();
    void until?.then(() => stop.abort());
    const both = AbortSignal.any([signal, stop.signal]);
    await Promise.all(
      Object.entries(r.inputRequests ?? {}).map(async ([key, req]) => {
        try {
          answers[key] = await this.ask(req.method, req.params, both);
        } catch {
          // unanswered: the tool sees the key missing
        }
      }),
    );
    return answers;
  }

  /** A request to the client (2025 connections only); withdrawn with `notifications/cancelled` when `signal` aborts. */
  private ask(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const id = `subagents-${++this.seq}`;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new Error("withdrawn"));
      const withdraw = () => {
        if (!this.pending.delete(id)) return;
        this.o.write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } });
        reject(new Error("withdrawn"));
      };
      signal.addEventListener("abort", withdraw, { once: true });
      const done = () => signal.removeEventListener("abort", withdraw);
      this.pending.set(id, {
        resolve: (v) => {
          done();
          resolve(v);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
      this.o.write({ jsonrpc: "2.0", id, method, params });
    });
  }
}
