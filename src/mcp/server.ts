// `subagents mcp`: an MCP server on stdio (docs/mcp.md) serving the pi extension's five tools with the same
// contracts, on the current protocol revision (2026-07-28, with the Tasks extension) and the 2025 ones a client
// opens with `initialize` (protocol/session.ts). stdout carries protocol messages only; anything else goes to
// stderr. The server owns its children: when the client goes away (stdin closes, or the process that started the
// server dies) or a signal ends it, they are stopped with the kill protocol and recorded as interrupted before it
// exits — whatever state its calls are in.
import { cancelSession } from "../control/actions.ts";
import { sessionState } from "../control/client.ts";
import type { ToolName } from "../core/call/tool-texts.ts";
import { CapGuard } from "../core/run/cap-guard.ts";
import { ownerShutdown } from "../core/run/process/abort-reason.ts";
import { LineSplitter } from "../core/run/process/line-splitter.ts";
import { McpCalls } from "./calls.ts";
import { McpSession, type ToolContext, type ToolOutcome } from "./protocol/session.ts";
import type { Message } from "./protocol/wire.ts";
import { RESULTS } from "./results.ts";
import { toolSpec } from "./schemas.ts";
import type { McpServices } from "./services.ts";
import { TaskIndex } from "./task-index.ts";
import { McpTasks } from "./tasks.ts";
import { outputHandler, profilesHandler, sessionHandler } from "./tool-retrieval.ts";
import { delegateHandler, type RunDeps, subagentHandler } from "./tool-run.ts";
import { batchHandler } from "./tool-batch.ts";

/** The kill protocol's own bound (SIGTERM, 5 s, SIGKILL) plus a moment to record the ends. */
const SHUTDOWN_GRACE_MS = 6000;
/** How often the server looks whether the process that started it is still there. */
const PARENT_CHECK_MS = 1000;

const INSTRUCTIONS =
  "Hands work to pi sub-agents: isolated child agents, many at once, each with its own context, tools and model. " +
  "Use delegate_to_subagents for independent parts of a job, subagent for one named agent you may continue.";

type Handler = (d: RunDeps, args: unknown, ctx: ToolContext) => Promise<ToolOutcome>;
const HANDLERS: Record<ToolName, Handler> = {
  delegate_to_subagents: delegateHandler,
  get_subagent_output: outputHandler,
  get_subagent_session: (d, a) => sessionHandler(d, a),
  list_subagent_profiles: (d, _a, ctx) => profilesHandler(d, ctx),
  subagent: subagentHandler,
  subagent_batch: batchHandler,
};

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
  const index = new TaskIndex(services.host, services.dataDir);
  index.sweep(Date.now());
  const tasks = new McpTasks({
    store: services.store,
    index,
    results: RESULTS,
    cancelElsewhere: (id) =>
      cancelSession(sessionState(services, id), id, () => services.store.getSession(id)?.status ?? "finished"),
  });
  const deps: RunDeps = { services, calls, tasks, caps: new CapGuard(undefined, "this MCP server") };
  const write = (m: Message | Message[]) => {
    if (!process.stdout.writable) return;
    process.stdout.write(`${JSON.stringify(Array.isArray(m) ? m : { jsonrpc: "2.0", ...m })}\n`);
  };
  const session = new McpSession({
    info: { name: "subagents", version: services.version },
    instructions: INSTRUCTIONS,
    state: calls.codec,
    write,
    tasks,
    warn: (line) => process.stderr.write(`subagents mcp: warning: ${line}\n`),
    tools: (Object.keys(HANDLERS) as ToolName[])
      .filter((name) => settings.tools.includes(name))
      .map((name) => ({ ...toolSpec(name), handle: (args, ctx) => HANDLERS[name](deps, args, ctx) })),
  });
  readLines(process.stdin, (line) => session.receive(line));
  return new Promise((resolve) => {
    let stopping = false;
    const parent = process.ppid;
    const watch = setInterval(() => {
      // Started by a client that died without closing our stdin (its own child kept it open): nobody is left.
      if (process.ppid !== parent) stop(0);
    }, PARENT_CHECK_MS);
    watch.unref();
    const stop = (code: number) => {
      if (stopping) return;
      stopping = true;
      clearInterval(watch);
      void (async () => {
        session.close();
        tasks.close();
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
