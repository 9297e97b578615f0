// The official MCP TypeScript SDK's client, connected to `dist/subagents mcp` over stdio in a test world: on the
// 2025 `initialize` handshake (the SDK client's default) or pinned to the 2026-07-28 revision.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { join } from "node:path";
import { REPO, type PiWorld } from "./pi-env.ts";

export type Era = "legacy" | "modern";
export const ERAS: Era[] = ["legacy", "modern"];

export type McpTestClient = {
  client: Client;
  /** The server process's pid. */
  pid: number;
  /** What the server wrote to stderr so far. */
  stderr(): string;
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
    /** Folders the client gives as roots (it declares roots only with this). */
    roots?: string[];
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
  if (o.roots) {
    const roots = o.roots.map((dir) => ({ uri: `file://${dir}` }));
    client.setRequestHandler("roots/list", async () => ({ roots }));
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
  return { client, pid: transport.pid ?? 0, stderr: () => err, close: () => client.close() };
}
