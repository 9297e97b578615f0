// get_subagent_output, get_subagent_session, list_subagent_profiles (docs/pi-extension.md).
import { TOOL_TEXTS } from "../core/call/tool-texts.ts";
import { firstProblem, SCHEMAS, EMPTY_SCHEMA, OUTPUT_SCHEMA, SESSION_ID_SCHEMA } from "../core/call/schemas.ts";
import { steerAndWaitNotes } from "../control/actions.ts";
import { workflowLines } from "../core/call/workflow.ts";
import { renderSimpleCall, renderTruncating, textLines, type ThemeLike } from "./render.ts";
import type { ToolContext, ToolEnv } from "./tool-env.ts";
import { outputResult, profilesResult, recordedSession, sessionResult } from "../ui/retrieval.ts";
import { backgroundUsage } from "../core/call/results.ts";

type Result = { content?: { text?: string }[]; details?: { maxLines?: number } };

/** Shared by both retrieval tools: validated id, the record (or the spec's not-found error), and settings. */
async function lookup(env: ToolEnv, params: unknown, ctx: ToolContext) {
  const problem = firstProblem(SCHEMAS.sessionId, params);
  if (problem) throw new Error(`Invalid parameters: ${problem}`);
  const sessionId = (params as { sessionId: string }).sessionId;
  const rt = await env.services();
  const record = recordedSession(rt.store, sessionId);
  const maxLines = rt.settingsFor(ctx.cwd).settings.maxLinesPerWindow;
  return { sessionId, rt, record, maxLines };
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
      const problem = firstProblem(SCHEMAS.output, params);
      if (problem) throw new Error(`Invalid parameters: ${problem}`);
      const p = params as { sessionId: string; steer?: string; wait?: boolean };
      const session = env.sessions.for(ctx.sessionManager?.getSessionId?.());
      // The same owner-based steer and wait as the CLI's, for sessions of any pi session or the CLI. While the model
      // waits here, the end's notice would only repeat this result.
      const notes = await steerAndWaitNotes(await env.services(), p.sessionId, p, signal, () =>
        session.awaiting(p.sessionId),
      );
      const { sessionId, record, maxLines } = await lookup(env, { sessionId: p.sessionId }, ctx);
      const r = outputResult(record, notes);
      // A background child's spend reaches pi's totals with the first result that returns its output.
      const usage = r.ongoing ? undefined : backgroundUsage(session.takeBackgroundSpend(sessionId));
      return {
        content: [{ type: "text", text: r.text }],
        details: { ...r.details, maxLines },
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
      const { rt, record, maxLines } = await lookup(env, params, ctx);
      const r = sessionResult(rt.store, record);
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
      const rt = await env.services();
      const { profiles, diagnostics } = rt.profilesFor(ctx.cwd);
      const r = profilesResult(profiles, diagnostics, workflowLines(rt, ctx.cwd));
      return { content: [{ type: "text", text: r.text }], details: r.details };
    },
    renderCall: (_args: unknown, theme: ThemeLike) => renderSimpleCall("list_subagent_profiles", "", theme),
    renderResult: (result: Result) => textLines(result.content?.[0]?.text ?? ""),
  };
}
