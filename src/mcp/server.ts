// `subagents mcp`: an MCP server on stdio (docs/mcp.md) serving the pi extension's five tools with the same
// contracts, on the current protocol revision (2026-07-28) and the 2025 ones a client opens with `initialize`
// (protocol/session.ts). stdout carries protocol messages only; anything else goes to stderr. The server owns its
// children: when the client goes away (stdin closes) or a signal ends it, they are stopped with the kill protocol
// and recorded as interrupted before it exits.
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
import { LineSplitter } from "../core/run/process/line-splitter.ts";
import { McpCalls } from "./calls.ts";
import { McpSession, type ToolContext, type ToolOutcome } from "./protocol/session.ts";
import type { Message } from "./protocol/wire.ts";
import type { McpServices } from "./services.ts";
import { outputHandler, profilesHandler, sessionHandler } from "./tool-retrieval.ts";
import { delegateHandler, type RunDeps, subagentHandler } from "./tool-run.ts";

/** The kill protocol's own bound (SIGTERM, 5 s, SIGKILL) plus a moment to record the ends. */
const SHUTDOWN_GRACE_MS = 7000;

const INSTRUCTIONS =
  "Hands work to pi sub-agents: isolated child agents, many at once, each with its own context, tools and model. " +
  "Use delegate_to_subagents for independent parts of a job, subagent for one named agent you may continue.";

type Handler = (d: RunDeps, args: unknown, ctx: ToolContext) => Promise<ToolOutcome>;
const TOOLS: { name: ToolName; input: unknown; output?: unknown; handle: Handler }[] = [
  { name: "delegate_to_subagents", input: DELEGATE_SCHEMA, output: TASKS_OUTPUT_SCHEMA, handle: delegateHandler },
  { name: "get_subagent_output", input: OUTPUT_SCHEMA, handle: outputHandler },
  { name: "get_subagent_session", input: SESSION_ID_SCHEMA, handle: (d, a) => sessionHandler(d, a) },
  { name: "list_subagent_profiles", input: EMPTY_SCHEMA, handle: (d, _a, ctx) => profilesHandler(d, ctx) },
  { name: "subagent", input: SUBAGENT_SCHEMA, output: TASKS_OUTPUT_SCHEMA, handle: subagentHandler },
];

/** What a tool's description says over MCP: pi's description and its guidelines (MCP has no field for them). */
const describe = (name: ToolName) => [TOOL_TEXTS[name].description, ...TOOL_TEXTS[name].guidelines].join(" ");

/** Newline-delimited messages from `input`, one line at a time. A message may be megabytes (a task's prompt): the
 * splitter keeps a line's chunks apart until its end instead of searching one growing string again per chunk. */
function readLines(input: NodeJS.ReadableStream, line: (text: string) => void): void {
  const splitter = new LineSplitter(line, Number.POSITIVE_INFINITY);
  input.on("data", (chunk: Buffer) => splitter.push(chunk));
}

/** Serves until the client closes stdin or a signal arrives; resolves with the exit code once every child ended. */
export function serveMcp(services: McpServices): Promise<number> {
  const settings = services.settingsFor(services.cwd);
  const calls = new McpCalls();
  const deps: RunDeps = { services, calls, caps: new CapGuard(undefined, "this MCP server") };
  const write = (m: Message) => {
    if (!process.stdout.writable) return;
    process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`);
  };
  const session = new McpSession({
    info: { name: "subagents", version: services.version },
    instructions: INSTRUCTIONS,
    state: calls.codec,
    write,
    tools: TOOLS.filter((t) => settings.tools.includes(t.name)).map((t) => ({
      name: t.name,
      description: describe(t.name),
      inputSchema: t.input,
      outputSchema: t.output,
      handle: (args, ctx) => t.handle(deps, args, ctx),
    })),
  });
  readLines(process.stdin, (line) => session.receive(line));
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      void (async () => {
        session.close();
        await calls.stopAll(ownerShutdown(), SHUTDOWN_GRACE_MS);
        (await services.owner()).close();
        resolve(code);
      })();
    };
    process.stdin.once("end", () => stop(0));
    process.stdin.once("close", () => stop(0));
    // A client that stops reading: nothing more can reach it.
    process.stdout.once("error", () => stop(0));
    process.once("SIGTERM", () => stop(143));
    process.once("SIGINT", () => stop(130));
    process.once("SIGHUP", () => stop(129));
  });
}
