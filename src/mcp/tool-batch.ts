// subagent_batch over MCP (control/batch-tool.ts; off unless subagents.tools names it): the batch runs in a process
// of its own, in the folder the client's roots give a call, under this server's caps.
import { batchTool } from "../control/batch-tool.ts";
import { parseTraceparent, traceEnv } from "../core/trace/context.ts";
import { callCwd, clientRoots } from "./client.ts";
import { inputRequired } from "./protocol/wire.ts";
import type { ToolContext, ToolOutcome } from "./protocol/session.ts";
import type { RunDeps } from "./tool-run.ts";

export async function batchHandler(d: RunDeps, raw: unknown, ctx: ToolContext): Promise<ToolOutcome> {
  const roots = clientRoots(ctx, d.calls.stateOf(ctx).roots === true);
  if ("ask" in roots) return inputRequired(roots.ask, d.calls.codec.mint({ roots: true }));
  const cwd = callCwd(d.services.cwd, roots.roots);
  // The job joins the client's trace, as a call does: its process continues from the request's _meta.traceparent.
  const parent = parseTraceparent(ctx.trace?.traceparent, ctx.trace?.tracestate);
  const r = await batchTool(raw, {
    store: d.services.store,
    dataDir: d.services.dataDir,
    command: d.services.command,
    cwd,
    env: parent ? { ...process.env, ...traceEnv(parent) } : process.env,
    caps: { check: (caps, call) => d.caps.check(caps, call), settings: d.services.settingsFor(cwd) },
  });
  return {
    content: [{ type: "text", text: r.text }],
    structuredContent: r.details,
    ...(r.isError ? { isError: true } : {}),
  };
}
