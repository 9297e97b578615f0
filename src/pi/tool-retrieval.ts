// get_subagent_output, get_subagent_session, list_subagent_profiles (docs/pi-extension.md).
import { TOOL_TEXTS } from "../core/call/tool-texts.ts";
import { EMPTY_SCHEMA, OUTPUT_SCHEMA, SESSION_ID_SCHEMA } from "../core/call/schemas.ts";
import { outputFlow, profilesFlow, sessionFlow } from "../core/call/tools/retrieval.ts";
import { steerAndWaitNotes } from "../control/actions.ts";
import { renderSimpleCall, renderTruncating, textLines, type ThemeLike } from "./render.ts";
import type { ToolContext, ToolEnv } from "./tool-env.ts";
import { outputResult, profilesResult, sessionResult } from "../ui/retrieval.ts";
import { backgroundUsage } from "../core/call/results.ts";

type Result = { content?: { text?: string }[]; details?: { maxLines?: number } };

/** A retrieval flow's refusal, as pi shows a tool's error. */
function thrown(r: { refusal: { message: string } }): never {
  throw new Error(r.refusal.message);
}

const truncatingResult = (result: Result, opts: { expanded: boolean }, theme: ThemeLike) =>
  renderTruncating(result.content?.[0]?.text ?? "", result.details?.maxLines ?? 15, opts.expanded, theme);

export function outputTool(env: ToolEnv) {
  return {
    name: "get_subagent_output",
    label: "Sub-agent output",
    description: TOOL_TEXTS.get_subagent_output.description,
    promptSnippet: "Fetch a sub-agent's full output by session id",
    parameters: OUTPUT_SCHEMA,
    async execute(_id: string, params: unknown, signal: AbortSignal | undefined, _onUpdate: unknown, ctx: ToolContext) {
      const session = env.sessions.for(ctx.sessionManager?.getSessionId?.());
      const rt = await env.services();
      const found = await outputFlow(
        params,
        {
          store: rt.store,
          // The same owner-based steer and wait as the CLI's, for sessions of any pi session or the CLI. While the
          // model waits here, the end's notice would only repeat this result.
          steerAndWait: (id, o, sig) => steerAndWaitNotes(rt, id, o, sig, () => session.awaiting(id)),
        },
        signal,
      );
      if ("refusal" in found) thrown(found);
      const r = outputResult(found.record, found.notes);
      // A background child's spend reaches pi's totals with the first result that returns its output.
      const usage = r.ongoing ? undefined : backgroundUsage(session.takeBackgroundSpend(found.record.id));
      return {
        content: [{ type: "text", text: r.text }],
        details: { ...r.details, maxLines: rt.settingsFor(ctx.cwd).settings.maxLinesPerWindow },
        ...(usage ? { usage } : {}),
      };
    },
    renderCall: (args: { sessionId?: string; steer?: string; wait?: boolean }, theme: ThemeLike) =>
      renderSimpleCall(
        "get_subagent_output",
        `${args?.sessionId ?? ""}${args?.wait ? " (wait)" : ""}${args?.steer ? ` ↪ ${args.steer.slice(0, 80)}` : ""}`,
        theme,
      ),
    renderResult: truncatingResult,
  };
}

export function sessionTool(env: ToolEnv) {
  return {
    name: "get_subagent_session",
    label: "Sub-agent session",
    description: TOOL_TEXTS.get_subagent_session.description,
    promptSnippet: "Read a sub-agent session's transcript by session id",
    parameters: SESSION_ID_SCHEMA,
    async execute(
      _id: string,
      params: unknown,
      _signal: AbortSignal | undefined,
      _onUpdate: unknown,
      ctx: ToolContext,
    ) {
      const rt = await env.services();
      const found = sessionFlow(params, rt.store);
      if ("refusal" in found) thrown(found);
      const r = sessionResult(rt.store, found.record);
      const maxLines = rt.settingsFor(ctx.cwd).settings.maxLinesPerWindow;
      return { content: [{ type: "text", text: r.text }], details: { ...r.details, maxLines } };
    },
    renderCall: (args: { sessionId?: string }, theme: ThemeLike) =>
      renderSimpleCall("get_subagent_session", args?.sessionId ?? "", theme),
    renderResult: truncatingResult,
  };
}

export function profilesTool(env: ToolEnv) {
  return {
    name: "list_subagent_profiles",
    label: "Sub-agent profiles",
    description: TOOL_TEXTS.list_subagent_profiles.description,
    promptSnippet: "List the named sub-agents",
    parameters: EMPTY_SCHEMA,
    async execute(
      _id: string,
      _params: unknown,
      _signal: AbortSignal | undefined,
      _onUpdate: unknown,
      ctx: ToolContext,
    ) {
      const { profiles, diagnostics, workflows } = profilesFlow(await env.services(), ctx.cwd);
      const r = profilesResult(profiles, diagnostics, workflows);
      return { content: [{ type: "text", text: r.text }], details: r.details };
    },
    renderCall: (_args: unknown, theme: ThemeLike) => renderSimpleCall("list_subagent_profiles", "", theme),
    renderResult: (result: Result) => textLines(result.content?.[0]?.text ?? ""),
  };
}
