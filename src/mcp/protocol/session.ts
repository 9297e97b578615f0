// One MCP connection (docs/mcp.md "Protocol"). A request whose `_meta` names a revision is served by that revision's
// rules (2026-07-28: capabilities per request, `resultType` on every result, a tool's questions as an
// `input_required` result the client answers by retrying, and the Tasks extension for a client that declares it).
// A client that opens with `initialize` gets the 2025 rules: capabilities from `initialize`, and a tool's
// `input_required` is fulfilled here by pushing its requests (`elicitation/create`, `roots/list`) to the client and
// running the tool again with the answers, within the same request. Either way a tool handler is written once.
// `notifications/cancelled` aborts a request's signal; nothing is sent for a cancelled request.
// Every request this server sends is tried once, with a timeout; a tool that asks again for what the client could
// not answer ends its request with an error instead of asking forever.
import { classify, type Incoming } from "./jsonrpc.ts";
import type { RequestStateCodec } from "./request-state.ts";
import {
  BATCH_VERSIONS,
  echo,
  ERR,
  type Id,
  type InputRequired,
  isInputRequired,
  isTaskCreated,
  LEGACY_VERSIONS,
  type Message,
  META,
  MODERN_VERSIONS,
  TASKS_EXTENSION,
  type TaskCreated,
  type TaskView,
  taskWire,
  type ToolResult,
  WireError,
  wireRequests,
} from "./wire.ts";

export type ClientCaps = { elicitation: boolean; roots: boolean; tasks: boolean };

/** What a tool handler gets for one round of its call. */
export type ToolContext = {
  caps: ClientCaps;
  progressToken?: Id;
  /** The client's answers to the previous round's input requests, by key (untrusted input). */
  inputResponses: Record<string, unknown>;
  /** The previous round's `requestState` payload, verified (absent on a first round). */
  requestState?: unknown;
  /** The request's `_meta` as the client sent it (the client's own keys): read, never trusted. */
  meta: Record<string, unknown>;
  /** The client's trace context (`_meta.traceparent`, `_meta.tracestate`): where the call's trace hangs. */
  trace?: { traceparent?: string; tracestate?: string };
  signal: AbortSignal;
  notify(method: string, params: Record<string, unknown>): void;
  /** The client declares roots but could not give them: this connection asks for them no more. */
  rootsUnreadable(why: string): void;
};

/** `until`: on a 2025 connection, resolving it stops waiting for the pushed requests and runs the tool again. */
export type ToolOutcome = ToolResult | TaskCreated | (InputRequired & { until?: Promise<unknown> });

export type ToolDef = {
  name: string;
  title?: string;
  description: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: Record<string, unknown>;
  handle(args: unknown, ctx: ToolContext): Promise<ToolOutcome>;
};

/** The tasks a tool call was answered with (Tasks extension); each method throws a WireError for an unknown task. */
export type TaskHost = {
  get(taskId: string): TaskView;
  update(taskId: string, inputResponses: Record<string, unknown>): void;
  cancel(taskId: string): void;
};

export type SessionOptions = {
  info: { name: string; version: string };
  instructions: string;
  tools: ToolDef[];
  state: RequestStateCodec<unknown>;
  write(message: Message | Message[]): void;
  /** Serves the Tasks extension to the clients that declare it. */
  tasks?: TaskHost;
  /** One line for the server's log (stderr). */
  warn?(line: string): void;
};

/** How long a roots/list pushed to a 2025 client may go unanswered (an elicitation waits as long as its question). */
export const ROOTS_TIMEOUT_MS = 10_000;
/** A request pushed without a timeout of its own: none waits longer than a day. */
const LONGEST_ASK_MS = 86_400_000;

const TASK_METHODS = new Set(["tasks/get", "tasks/update", "tasks/cancel"]);

export class McpSession {
  private readonly running = new Map<Id, AbortController>();
  private readonly pending = new Map<Id, { resolve(r: unknown): void; reject(e: Error): void }>();
  private readonly tools: Map<string, ToolDef>;
  private initialized: unknown;
  /** The revision a 2025 client opened with. */
  private version: string | undefined;
  private noRoots = false;
  private closed = false;
  private seq = 0;

  constructor(private readonly o: SessionOptions) {
    this.tools = new Map(o.tools.map((t) => [t.name, t]));
  }

  /** One line from the client: a message, or a batch where the revision defines them. */
  receive(line: string): void {
    if (!line.trim()) return;
    let m: unknown;
    try {
      m = JSON.parse(line);
    } catch {
      return this.o.write({ jsonrpc: "2.0", id: null, error: { code: ERR.parse, message: "Parse error" } });
    }
    if (!Array.isArray(m)) {
      void this.handle(classify(m)).then((reply) => reply && this.o.write(reply));
      return;
    }
    if (!this.version || !BATCH_VERSIONS.includes(this.version) || m.length === 0)
      return this.o.write({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: ERR.invalidRequest,
          message: m.length
            ? `Invalid request: JSON-RPC batches are part of protocol revision ${BATCH_VERSIONS.join(", ")} only`
            : "Invalid request: an empty batch",
        },
      });
    void Promise.all(m.map((one) => this.handle(classify(one)))).then((replies) => {
      const sent = replies.filter((r): r is Message => r !== null);
      if (sent.length) this.o.write(sent);
    });
  }

  /** The client is gone: every request stops, every question to it is withdrawn. */
  close(): void {
    this.closed = true;
    for (const c of this.running.values()) c.abort(new Error("the MCP client closed the connection"));
    for (const p of this.pending.values()) p.reject(new Error("the MCP client closed the connection"));
    this.pending.clear();
  }

  /** The answer to one message, or null when it gets none. */
  private async handle(m: Incoming): Promise<Message | null> {
    switch (m.kind) {
      case "response":
        this.answered(m.id, m.result, m.error);
        return null;
      case "notification":
        this.notified(m.method, m.params);
        return null;
      case "invalid":
        return m.silent ? null : { jsonrpc: "2.0", id: m.id, error: { code: m.error.code, message: m.error.message } };
      case "request":
        if (this.running.has(m.id))
          return errorReply(m.id, new WireError(ERR.invalidRequest, `Invalid request: id ${echo(m.id)} is in use`));
        return this.request(m.id, m.method, m.params);
    }
  }

  private notified(method: string, params: Record<string, unknown>): void {
    if (method !== "notifications/cancelled") return;
    const id = params.requestId as Id | undefined;
    if (id !== undefined) this.running.get(id)?.abort(params.reason ?? new Error("cancelled by the MCP client"));
  }

  private answered(id: Id, result?: Record<string, unknown>, error?: Message["error"]): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (error) p.reject(new Error(typeof error.message === "string" ? error.message : "error"));
    else p.resolve(result ?? {});
  }

  private async request(id: Id, method: string, params: Record<string, unknown>): Promise<Message | null> {
    const control = new AbortController();
    this.running.set(id, control);
    try {
      const result = await this.dispatch(method, params, control.signal);
      return control.signal.aborted ? null : { jsonrpc: "2.0", id, result };
    } catch (err) {
      if (control.signal.aborted) return null;
      return errorReply(id, err instanceof WireError ? err : new WireError(ERR.internal, (err as Error).message));
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
        requested: echo(version),
      });
    const result = await this.method(method, params, meta, modern, signal);
    return modern
      ? { ...result, resultType: result.resultType ?? "complete", _meta: { [META.serverInfo]: this.o.info } }
      : result;
  }

  private capabilities(modern: boolean) {
    return { tools: {}, ...(modern && this.o.tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}) };
  }

  private async method(
    method: string,
    params: Record<string, unknown>,
    meta: Record<string, unknown>,
    modern: boolean,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    if (TASK_METHODS.has(method)) return this.taskMethod(method, params, this.capsOf(meta, modern));
    switch (method) {
      case "initialize": {
        this.initialized = params.capabilities;
        const asked = params.protocolVersion as string;
        this.version = LEGACY_VERSIONS.includes(asked) ? asked : LEGACY_VERSIONS[0];
        return {
          protocolVersion: this.version,
          capabilities: this.capabilities(false),
          serverInfo: this.o.info,
          instructions: this.o.instructions,
        };
      }
      case "server/discover":
        return {
          supportedVersions: MODERN_VERSIONS,
          capabilities: this.capabilities(true),
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
            ...(t.title ? { title: t.title } : {}),
            description: t.description,
            inputSchema: t.inputSchema,
            ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
            ...(t.annotations ? { annotations: t.annotations } : {}),
          })),
          ...(modern ? { ttlMs: 0, cacheScope: "private" } : {}),
        };
      case "tools/call":
        return this.callTool(params, meta, modern, signal);
      default:
        throw new WireError(ERR.methodNotFound, `Method not found: ${echo(method)}`);
    }
  }

  private capsOf(meta: Record<string, unknown>, modern: boolean): ClientCaps {
    const declared = (modern ? meta[META.clientCapabilities] : this.initialized) ?? {};
    const c = declared as {
      elicitation?: { form?: unknown; url?: unknown };
      roots?: unknown;
      extensions?: Record<string, unknown>;
    };
    // An elicitation capability that names modes must name forms; an empty one means forms (2025-06-18).
    const e = c.elicitation;
    return {
      elicitation: !!e && (e.form !== undefined || e.url === undefined),
      roots: !!c.roots && !this.noRoots,
      tasks: modern && !!this.o.tasks && !!c.extensions && c.extensions[TASKS_EXTENSION] !== undefined,
    };
  }

  private taskMethod(method: string, params: Record<string, unknown>, caps: ClientCaps): Record<string, unknown> {
    const tasks = this.o.tasks;
    if (!tasks) throw new WireError(ERR.methodNotFound, `Method not found: ${method}`);
    if (!caps.tasks)
      throw new WireError(ERR.missingCapability, "Missing required client capability", {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    const taskId = params.taskId;
    if (typeof taskId !== "string") throw new WireError(ERR.invalidParams, "Invalid params: taskId must be a string");
    if (method === "tasks/get") return taskWire(tasks.get(taskId));
    if (method === "tasks/cancel") tasks.cancel(taskId);
    else {
      const responses = params.inputResponses;
      if (!responses || typeof responses !== "object" || Array.isArray(responses))
        throw new WireError(ERR.invalidParams, "Invalid params: inputResponses must be an object");
      tasks.update(taskId, responses as Record<string, unknown>);
    }
    return {};
  }

  private async callTool(
    params: Record<string, unknown>,
    meta: Record<string, unknown>,
    modern: boolean,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const tool = this.tools.get(String(params.name));
    if (!tool) throw new WireError(ERR.invalidParams, `Unknown tool: ${echo(params.name)}`);
    let requestState: unknown;
    if (typeof params.requestState === "string") {
      requestState = this.o.state.verify(params.requestState);
      if (requestState === null) throw new WireError(ERR.invalidParams, "Invalid or expired requestState");
    }
    const ctx: ToolContext = {
      caps: this.capsOf(meta, modern),
      progressToken: meta.progressToken as Id | undefined,
      inputResponses: (params.inputResponses ?? {}) as Record<string, unknown>,
      requestState,
      meta,
      trace: {
        ...(typeof meta.traceparent === "string" ? { traceparent: meta.traceparent } : {}),
        ...(typeof meta.tracestate === "string" ? { tracestate: meta.tracestate } : {}),
      },
      signal,
      notify: (method, p) => {
        if (!signal.aborted) this.o.write({ jsonrpc: "2.0", method, params: p });
      },
      rootsUnreadable: (why) => this.rootsUnreadable(why),
    };
    // Keys pushed to a 2025 client in this request: asking for one again would ask forever.
    const asked = new Set<string>();
    for (;;) {
      const r = await tool.handle(params.arguments ?? {}, ctx);
      if (isTaskCreated(r)) return { resultType: "task", ...taskWire(r.task) };
      if (!isInputRequired(r)) return r;
      const { until, ...wire } = r;
      const requests = wire.inputRequests ?? {};
      if (modern) return { ...wire, inputRequests: wireRequests(requests) };
      // A 2025 client takes no input_required: its requests go to the client here, then the tool runs again.
      const keys = Object.keys(requests);
      const again = keys.filter((k) => asked.has(k));
      if (signal.aborted || this.closed) throw new WireError(ERR.internal, "The request ended");
      if (!keys.length || again.length)
        throw new WireError(ERR.internal, `The tool asked the client again for what it could not answer (${again})`);
      for (const k of keys) asked.add(k);
      ctx.inputResponses = await this.fulfil(wire, signal, until);
      ctx.requestState = wire.requestState ? this.o.state.verify(wire.requestState) : undefined;
      ctx.caps = this.capsOf(meta, modern);
    }
  }

  private rootsUnreadable(why: string): void {
    if (this.noRoots) return;
    this.noRoots = true;
    this.o.warn?.(`the MCP client's roots could not be read (${why}): tasks run in the server's folder`);
  }

  private async fulfil(r: InputRequired, signal: AbortSignal, until?: Promise<unknown>) {
    const answers: Record<string, unknown> = {};
    const stop = new AbortController();
    void until?.then(() => stop.abort());
    const both = AbortSignal.any([signal, stop.signal]);
    await Promise.all(
      Object.entries(r.inputRequests ?? {}).map(async ([key, req]) => {
        try {
          answers[key] = await this.ask(req.method, req.params, both, req.timeoutMs ?? LONGEST_ASK_MS);
        } catch (err) {
          // Unanswered: the tool sees the key missing. Roots that could not be read are not asked for again.
          if (req.method === "roots/list" && !both.aborted) this.rootsUnreadable((err as Error).message);
        }
      }),
    );
    return answers;
  }

  /** A request to the client (2025 connections only), tried once: withdrawn with `notifications/cancelled` when
   *  `signal` aborts or `timeoutMs` passes without an answer. */
  private ask(method: string, params: Record<string, unknown>, signal: AbortSignal, timeoutMs: number) {
    const id = `subagents-${++this.seq}`;
    return new Promise<unknown>((resolve, reject) => {
      if (signal.aborted || this.closed) return reject(new Error("withdrawn"));
      const withdraw = (why: string) => {
        if (!this.pending.delete(id)) return;
        done();
        this.o.write({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: why } });
        reject(new Error(why));
      };
      const aborted = () => withdraw("no longer needed");
      const timer = setTimeout(() => withdraw(`no answer within ${Math.round(timeoutMs / 1000)} s`), timeoutMs);
      signal.addEventListener("abort", aborted, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", aborted);
      };
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

function errorReply(id: Id, e: WireError): Message {
  return {
    jsonrpc: "2.0",
    id,
    error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) },
  };
}
