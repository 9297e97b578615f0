// `subagents mcp`: an MCP server on stdio (docs/mcp.md) serving the pi extension's five tools with the same
// contracts, on every protocol revision the SDK serves (2026-07-28, and the 2025 ones through `initialize`).
// stdout carries protocol messages only; anything else goes to stderr. The server owns its children: when the
// client goes away (stdin closes) or a signal ends it, they are stopped with the kill protocol and recorded as
// interrupted before it exits.
import { fromJsonSchema, McpServer, type ServerContext } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { TASKS_OUTPUT_SCHEMA } from "../core/call/results.ts";
import {
  DELEGATE_SCHEMA,
  EMPTY_SCHEMA,
  OUTPUT_SCHEMA,
  SESSION_ID_SCHEMA,
  SUBAGENT_SCHEMA,
} from "../core/call/schemas.ts";
import { TOOL_TEXTS, type ToolName } from "../core/call/tool-texts.ts";
import { CapGuard } from "../core/run/cap-guard.ts";
import { ownerShutdown } from "../core/run/process/abort-reason.ts";
import { McpCalls, type ToolResult } from "./calls.ts";
import { outputHandler, profilesHandler, sessionHandler } from "./tool-retrieval.ts";
import { delegateHandler, subagentHandler, type RunDeps } from "./tool-run.ts";
import type { McpServices } from "./services.ts";

/** The kill protocol's own bound (SIGTERM, 5 s, SIGKILL) plus a moment to record the ends. */
const SHUTDOWN_GRACE_MS = 7000;

const INSTRUCTIONS =
  "Hands work to pi sub-agents: isolated child agents, many at once, each with its own context, tools and model. " +
  "Use delegate_to_subagents for independent parts of a job, subagent for one named agent you may continue.";

/** Arguments are checked by each tool with the pi front's own rules and messages (core/call), not by the SDK. */
const ourChecks = {
  getValidator: () => (input: unknown) => ({ valid: true as const, data: input as never, errorMessage: undefined }),
};
const schema = (s: unknown) => fromJsonSchema(s as Parameters<typeof fromJsonSchema>[0], ourChecks);

type Handler = (d: RunDeps, args: unknown, ctx: ServerContext) => Promise<ToolResult>;
const TOOLS: { name: ToolName; input: unknown; output?: unknown; handle: Handler }[] = [
  { name: "delegate_to_subagents", input: DELEGATE_SCHEMA, output: TASKS_OUTPUT_SCHEMA, handle: delegateHandler },
  { name: "get_subagent_output", input: OUTPUT_SCHEMA, handle: outputHandler },
  { name: "get_subagent_session", input: SESSION_ID_SCHEMA, handle: (d, a) => sessionHandler(d, a) },
  { name: "list_subagent_profiles", input: EMPTY_SCHEMA, handle: (d, _a, ctx) => profilesHandler(d, ctx) },
  { name: "subagent", input: SUBAGENT_SCHEMA, output: TASKS_OUTPUT_SCHEMA, handle: subagentHandler },
];

/** What a tool's description says over MCP: pi's description and its guidelines (MCP has no field for them). */
const describe = (name: ToolName) => [TOOL_TEXTS[name].description, ...TOOL_TEXTS[name].guidelines].join(" ");

/** Serves until the client closes stdin or a signal arrives; resolves with the exit code once every child ended. */
export function serveMcp(services: McpServices): Promise<number> {
  const settings = services.settingsFor(services.cwd);
  const calls = new McpCalls(() => services.settingsFor(services.cwd).askTimeout * 1000);
  let server: McpServer | undefined;
  const deps: RunDeps = {
    services,
    calls,
    caps: new CapGuard(undefined, "this MCP server"),
    initialized: () => server?.server.getClientCapabilities() as Record<string, unknown> | undefined,
  };
  const handle = serveStdio(
    () => {
      server = new McpServer(
        { name: "subagents", version: services.version },
        { capabilities: { tools: {} }, instructions: INSTRUCTIONS, requestState: { verify: calls.codec.verify } },
      );
      for (const t of TOOLS) {
        if (!settings.tools.includes(t.name)) continue;
        server.registerTool(
          t.name,
          {
            description: describe(t.name),
            inputSchema: schema(t.input),
            ...(t.output ? { outputSchema: schema(t.output) } : {}),
          },
          (async (args: unknown, ctx: ServerContext) => t.handle(deps, args, ctx)) as never,
        );
      }
      return server;
    },
    { onerror: (err) => process.stderr.write(`subagents mcp: ${err.message}\n`) },
  );
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      void (async () => {
        await calls.stopAll(ownerShutdown(), SHUTDOWN_GRACE_MS);
        (await services.owner()).close();
        await handle.close().catch(() => {});
        resolve(code);
      })();
    };
    process.stdin.once("end", () => stop(0));
    process.stdin.once("close", () => stop(0));
    process.once("SIGTERM", () => stop(143));
    process.once("SIGINT", () => stop(130));
    process.once("SIGHUP", () => stop(129));
  });
}
