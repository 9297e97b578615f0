// The official MCP TypeScript SDK's client, connected to `dist/subagents mcp` over stdio in a test world: on the
// 2025 `initialize` handshake (the SDK client's default) or pinned to the 2026-07-28 revision — and, for the Tasks
// extension, the official requester (`@modelcontextprotocol/ext-tasks`) over that client.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  type ApplicationInputRequest,
  createTaskSessionFromClient,
  type JsonRpcResponse,
  type TaskEnabledSession,
} from "@modelcontextprotocol/ext-tasks/client";
import { join } from "node:path";
import { REPO, type PiWorld } from "./pi-env.ts";

export type Era = "legacy" | "modern";
export const ERAS: Era[] = ["legacy", "modern"];

export type McpTestClient = {
  client: Client;
  transport: StdioClientTransport;
  /** The server process's pid. */
  pid: number;
  /** What the server wrote to stderr so far. */
  stderr(): string;
  /** How many roots/list requests the server sent. */
  rootsAsked: { n: number };
  close(): Promise<void>;
};

export async function connectMcp(
  world: PiWorld,
  o: {
    era?: Era;
    /** Answers the children's questions (the client declares elicitation only with this). */
    elicit?: (
      message: string,
    ) =>
      | { action: "accept"; content: { answer: string | boolean } }
      | { action: "decline" }
      | Promise<{ action: "accept"; content: { answer: string | boolean } }>;
    /** Folders the client gives as roots (it declares roots only with this); "error": it declares roots and
     *  answers roots/list with an error. */
    roots?: string[] | "error";
    cwd?: string;
    env?: Record<string, string>;
  } = {},
): Promise<McpTestClient> {
  const capabilities = {
    ...(o.elicit ? { elicitation: { form: {} } } : {}),
    ...(o.roots ? { roots: {} } : {}),
  };
  const client = new Client(
    { name: "subagents-test", version: "1.0.0" },
    { capabilities, ...(o.era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}) },
  );
  if (o.elicit) {
    const answer = o.elicit;
    client.setRequestHandler("elicitation/create", async (req) => answer(String(req.params.message)));
  }
  const rootsAsked = { n: 0 };
  if (o.roots) {
    const roots = o.roots === "error" ? null : o.roots.map((dir) => ({ uri: `file://${dir}` }));
    client.setRequestHandler("roots/list", async () => {
      rootsAsked.n++;
      if (!roots) throw new Error("roots are not available");
      return { roots };
    });
  }
  const transport = new StdioClientTransport({
    command: join(REPO, "dist", "subagents"),
    args: ["mcp"],
    cwd: o.cwd ?? world.workDir,
    env: { ...world.env, ...o.env },
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (c: Buffer) => {
    err += c.toString();
  });
  await client.connect(transport);
  return { client, transport, pid: transport.pid ?? 0, stderr: () => err, rootsAsked, close: () => client.close() };
}

/**
 * The SDK's client with the Tasks extension's requester on it (2026-07-28): the requester sends task traffic, which
 * the SDK's own codecs do not take, as raw JSON-RPC on the same transport (its documented `rawDispatch`).
 */
export async function connectTasksMcp(
  world: PiWorld,
  o: {
    /** Answers the children's questions (elicitation is declared only with this). */
    answer?: (message: string) => { action: "accept"; content: { answer: string | boolean } } | { action: "decline" };
    env?: Record<string, string>;
  } = {},
): Promise<McpTestClient & { tasks: TaskEnabledSession }> {
  const c = await connectMcp(world, {
    era: "modern",
    env: o.env,
    ...(o.answer ? { elicit: o.answer } : {}),
  });
  const waiting = new Map<string, (r: JsonRpcResponse) => void>();
  const inner = c.transport.onmessage;
  c.transport.onmessage = (msg: any) => {
    const resolve = typeof msg?.id === "string" && !("method" in msg) ? waiting.get(msg.id) : undefined;
    if (!resolve) return inner?.call(c.transport, msg);
    waiting.delete(msg.id);
    resolve("error" in msg ? { kind: "error", error: msg.error } : { kind: "result", result: msg.result });
  };
  let n = 0;
  const rawDispatch = (request: any, options?: { signal?: AbortSignal }) =>
    new Promise<JsonRpcResponse>((resolve, reject) => {
      const id = `raw-${++n}`;
      waiting.set(id, resolve);
      options?.signal?.addEventListener("abort", () => {
        waiting.delete(id);
        reject(options.signal?.reason);
      });
      c.transport.send({ ...request, jsonrpc: "2.0", id }).catch(reject);
    });
  const answer = o.answer;
  const tasks = createTaskSessionFromClient(c.client, {
    endpointId: "subagents-test",
    rawDispatch,
    v2RequestFraming: {
      protocolVersion: "2026-07-28",
      clientInfo: { name: "subagents-test", version: "1.0.0" },
      clientCapabilities: answer ? { elicitation: { form: {} } } : {},
    },
    ...(answer
      ? {
          onInputRequest: async (request: ApplicationInputRequest) => {
            if (request.kind !== "elicitation") throw new Error(`unexpected ${request.kind} request`);
            return answer(String(request.params.message)) as never;
          },
        }
      : {}),
  });
  return {
    ...c,
    tasks,
    close: async () => {
      await tasks.close().catch(() => {});
      await c.close();
    },
  };
}
