// The MCP wire as this server speaks it (docs/mcp.md "Protocol"): newline-delimited JSON-RPC 2.0 on stdin and
// stdout, the protocol revisions served, and the shapes a tool handler returns. Small on purpose: the parts of
// MCP the five tools use, for every revision a client may open with.

/** The current revision: version, identity and capabilities ride on every request's `_meta`. */
export const MODERN_VERSIONS = ["2026-07-28"];
/** Revisions a client opens with `initialize` (newest first: the answer to an unknown one). */
export const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

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

/** What a client may answer for (a server→client request, embedded in an `input_required` result). */
export type InputRequest = { method: "elicitation/create" | "roots/list"; params: Record<string, unknown> };

/** A tool call's result that asks the client for input first; the client retries the call with the answers. */
export type InputRequired = {
  resultType: "input_required";
  inputRequests?: Record<string, InputRequest>;
  requestState?: string;
};

export type ToolResult = { content: { type: "text"; text: string }[]; structuredContent?: unknown; isError?: boolean };

/** An elicitation form: a message and a flat JSON Schema of primitive fields. */
export const elicit = (message: string, requestedSchema: Record<string, unknown>): InputRequest => ({
  method: "elicitation/create",
  params: { mode: "form", message, requestedSchema },
});

export const listRoots = (): InputRequest => ({ method: "roots/list", params: {} });

export const inputRequired = (inputRequests: Record<string, InputRequest>, requestState?: string): InputRequired => ({
  resultType: "input_required",
  inputRequests,
  ...(requestState ? { requestState } : {}),
});

export const isInputRequired = (r: unknown): r is InputRequired =>
  !!r && typeof r === "object" && (r as { resultType?: unknown }).resultType === "input_required";
