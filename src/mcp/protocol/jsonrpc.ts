// What one JSON value from the client is, by JSON-RPC 2.0's rules: a request, a notification, a response to one of
// ours, or something invalid that still gets an answer when it can be told apart from a notification. Input is
// untrusted: an id that is not a string or a number, a `jsonrpc` that is not "2.0", an id without a method and
// without a result are each refused, never taken for something else.
import { ERR, type Id, type Message, WireError } from "./wire.ts";

export type Incoming =
  | { kind: "request"; id: Id; method: string; params: Record<string, unknown> }
  | { kind: "notification"; method: string; params: Record<string, unknown> }
  | { kind: "response"; id: Id; result?: Record<string, unknown>; error?: Message["error"] }
  /** Answered with an error: to its id when it has a usable one, else to null. `silent`: nothing to answer (an
   *  invalid notification, or a response to no request of ours). */
  | { kind: "invalid"; id: Id | null; error: WireError; silent?: boolean };

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** JSON-RPC ids are strings or numbers (MCP: never null for a request); anything else cannot be answered to. */
export const isId = (v: unknown): v is Id => typeof v === "string" || (typeof v === "number" && Number.isFinite(v));

type Invalid = Extract<Incoming, { kind: "invalid" }>;

const invalid = (id: Id | null, message: string, code: number = ERR.invalidRequest): Invalid => ({
  kind: "invalid",
  id,
  error: new WireError(code, message),
});

export function classify(m: unknown): Incoming {
  if (!isObject(m)) return invalid(null, "Invalid request: not a JSON-RPC object");
  const hasId = "id" in m && m.id !== undefined;
  const id = isId(m.id) ? m.id : null;
  if (hasId && m.id !== null && id === null)
    return invalid(null, "Invalid request: an id must be a string or a number");
  if (m.jsonrpc !== "2.0") return { ...invalid(id, 'Invalid request: "jsonrpc" must be "2.0"'), silent: !hasId };
  if (m.method === undefined) {
    if (id === null) return invalid(null, "Invalid request: no method and no id");
    if (!("result" in m) && !("error" in m)) return invalid(id, "Invalid request: an id without a method");
    if ("result" in m && !isObject(m.result)) return { ...invalid(id, "Invalid response: result"), silent: true };
    return {
      kind: "response",
      id,
      result: m.result as Record<string, unknown> | undefined,
      error: m.error as Message["error"],
    };
  }
  if (typeof m.method !== "string")
    return { ...invalid(id, "Invalid request: method must be a string"), silent: !hasId };
  if (m.params !== undefined && !isObject(m.params))
    return { ...invalid(id, "Invalid params: params must be an object", ERR.invalidParams), silent: !hasId };
  const params = (m.params ?? {}) as Record<string, unknown>;
  if (!hasId) return { kind: "notification", method: m.method, params };
  // MCP: a request's id is never null (JSON-RPC 2.0 allows it only for answers to what could not be read).
  if (id === null) return invalid(null, "Invalid request: a request id must not be null");
  return { kind: "request", id, method: m.method, params };
}
