// The MCP wire as this server speaks it (docs/mcp.md "Protocol"): newline-delimited JSON-RPC 2.0 on stdin and
// stdout, the protocol revisions served, and the shapes a tool handler returns. Small on purpose: the parts of
// MCP the five tools use, for every revision a client may open with, and the Tasks extension of the current one.

/** The current revision: version, identity and capabilities ride on every request's `_meta`. */
export const MODERN_VERSIONS = ["2026-07-28"];
/** Revisions a client opens with `initialize` (newest first: the answer to an unknown one). */
export const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/** The one revision whose clients may send JSON-RPC batches (added in 2025-03-26, removed in 2025-06-18). */
export const BATCH_VERSIONS = ["2025-03-26"];

/** The Tasks extension of the 2026-07-28 revision (its own specification, version 2026-07-28). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

export const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  serverInfo: "io.modelcontextprotocol/serverInfo",
} as const;

export const ERR = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  missingCapability: -32021,
  unsupportedVersion: -32022,
} as const;

export type Id = string | number;
export type Message = {
  jsonrpc?: string;
  id?: Id | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** A protocol error answered as a JSON-RPC error (never a crash of the server). */
export class WireError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** What an error message may quote of a client's input: enough to recognise it, never the whole of a 50 MB value. */
const ECHO_CHARS = 120;
export function echo(value: unknown): string {
  const s = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  return s.length <= ECHO_CHARS ? s : `${s.slice(0, ECHO_CHARS)}… (${s.length} characters)`;
}

/** What a client may answer for (a server→client request, embedded in an `input_required` result or a task).
 *  `timeoutMs` stays on this side: how long a request pushed to a 2025 client may go unanswered. */
export type InputRequest = {
  method: "elicitation/create" | "roots/list";
  params: Record<string, unknown>;
  timeoutMs?: number;
};

/** A tool call's result that asks the client for input first; the client retries the call with the answers. */
export type InputRequired = {
  resultType: "input_required";
  inputRequests?: Record<string, InputRequest>;
  requestState?: string;
};

export type ToolResult = { content: { type: "text"; text: string }[]; structuredContent?: unknown; isError?: boolean };

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** A task as the Tasks extension shows it (`tasks/get`, and the handle a `tools/call` returns): its state, and
 *  what that state carries — the outstanding input requests, the final result, or the JSON-RPC error. */
export type TaskView = {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, InputRequest>;
  result?: ToolResult;
  error?: { code: number; message: string };
};

/** A tool call answered with a task handle instead of its result (Tasks extension: `CreateTaskResult`). */
export type TaskCreated = { resultType: "task"; task: TaskView };

/** The wire form of input requests: what only this side needs is left out. */
export function wireRequests(requests: Record<string, InputRequest>): Record<string, InputRequest> {
  return Object.fromEntries(Object.entries(requests).map(([k, { method, params }]) => [k, { method, params }]));
}

/** A task's wire shape: the fields of its status, and only those (a working task carries no result). Its result is
 *  the tool call's, as a 2026-07-28 result (`resultType: "complete"`). */
export function taskWire(t: TaskView): Record<string, unknown> {
  const { inputRequests, result, error, ...base } = t;
  return {
    ...base,
    ...(t.status === "input_required" ? { inputRequests: wireRequests(inputRequests ?? {}) } : {}),
    ...(t.status === "completed" ? { result: { ...result, resultType: "complete" } } : {}),
    ...(t.status === "failed" ? { error } : {}),
  };
}

/** An elicitation form: a message and a flat JSON Schema of primitive fields. */
export const elicit = (message: string, requestedSchema: Record<string, unknown>): InputRequest => ({
  method: "elicitation/create",
  params: { mode: "form", message, requestedSchema },
});

export const listRoots = (timeoutMs?: number): InputRequest => ({
  method: "roots/list",
  params: {},
  ...(timeoutMs ? { timeoutMs } : {}),
});

export const inputRequired = (inputRequests: Record<string, InputRequest>, requestState?: string): InputRequired => ({
  resultType: "input_required",
  inputRequests,
  ...(requestState ? { requestState } : {}),
});

export const isInputRequired = (r: unknown): r is InputRequired =>
  !!r && typeof r === "object" && (r as { resultType?: unknown }).resultType === "input_required";

export const isTaskCreated = (r: unknown): r is TaskCreated =>
  !!r && typeof r === "object" && (r as { resultType?: unknown }).resultType === "task";
