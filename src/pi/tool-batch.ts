// subagent_batch inside pi (control/batch-tool.ts does the work; off unless subagents.tools names it): a batch
// started here runs in a process of its own and outlives this pi session; its spawns count against the session's
// caps when it starts.
import { TOOL_TEXTS } from "../core/call/tool-texts.ts";
import { BATCH_SCHEMA } from "../core/call/schemas.ts";
import { batchTool } from "../control/batch-tool.ts";
import { renderSimpleCall, renderTruncating, type ThemeLike } from "./render.ts";
import type { ToolContext, ToolEnv } from "./tool-env.ts";

export function batchToolOf(env: ToolEnv) {
  return {
    name: "subagent_batch",
    label: "Sub-agent batch",
    description: TOOL_TEXTS.subagent_batch.description,
    promptSnippet: "Run one prompt over every item of a file, in the background",
    parameters: BATCH_SCHEMA,
    async execute(
      _id: string,
      params: unknown,
      _signal: AbortSignal | undefined,
      _onUpdate: unknown,
      ctx: ToolContext,
    ) {
      const rt = await env.services();
      const { settings } = rt.settingsFor(ctx.cwd);
      const guard = env.guards.for(ctx.sessionManager?.getSessionId?.());
      const r = await batchTool(params, {
        store: rt.store,
        dataDir: rt.dataDir,
        command: rt.batchCommand,
        cwd: ctx.cwd,
        env: process.env,
        caps: { check: (caps, call) => guard.check(caps, call), settings },
      });
      if (r.isError) throw new Error(r.text);
      return { content: [{ type: "text", text: r.text }], details: { ...r.details, maxLines: 20 } };
    },
    renderCall: (args: { action?: string; job?: string; items?: string }, theme: ThemeLike) =>
      renderSimpleCall("subagent_batch", `${args?.action ?? ""} ${args?.job ?? args?.items ?? ""}`.trim(), theme),
    renderResult: (result: { content?: { text?: string }[] }, opts: { expanded: boolean }, theme: ThemeLike) =>
      renderTruncating(result.content?.[0]?.text ?? "", 20, opts.expanded, theme),
  };
}
