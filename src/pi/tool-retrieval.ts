// get_subagent_output, get_subagent_session, list_subagent_profiles (docs/pi-extension.md).
import { sanitize } from "../core/sanitize.ts";
import { profileSummary } from "../core/profiles/profile.ts";
import { formatSessionTranscript, latestOutput, sessionNotFound } from "../core/store/transcript.ts";
import { firstProblem, SCHEMAS, EMPTY_SCHEMA, OUTPUT_SCHEMA, SESSION_ID_SCHEMA } from "./schemas.ts";
import { steerAndWait } from "./session-control.ts";
import { workflowLines } from "./workflow-call.ts";
import { renderSimpleCall, renderTruncating, lines, type ThemeLike } from "./render.ts";
import type { ToolContext, ToolEnv } from "./tool-env.ts";
import { clip } from "../ui/text-width.ts";
import { backgroundUsage } from "./tool-results.ts";

export const NO_PROFILES =
  "No subagent profiles found. Add .md files to ~/.pi/agent/agent-profiles/ or .pi/agent-profiles/.";

type Result = { content?: { text?: string }[]; details?: { maxLines?: number } };

/** Shared by both retrieval tools: validated id, the record (or the spec's not-found error), and settings. */
async function lookup(env: ToolEnv, params: unknown, ctx: ToolContext) {
  const problem = firstProblem(SCHEMAS.sessionId, params);
  if (problem) throw new Error(`Invalid parameters: ${problem}`);
  const sessionId = (params as { sessionId: string }).sessionId;
  const rt = await env.services();
  const record = rt.store.getSession(sessionId);
  if (!record || record.runs.length === 0) throw new Error(sessionNotFound(sessionId));
  const maxLines = rt.settingsFor(ctx.cwd).settings.maxLinesPerWindow;
  return { sessionId, rt, record, last: record.runs[record.runs.length - 1], maxLines };
}

const truncatingResult = (result: Result, opts: { expanded: boolean }, theme: ThemeLike) =>
  renderTruncating(result.content?.[0]?.text ?? "", result.details?.maxLines ?? 15, opts.expanded, theme);

export function outputTool(env: ToolEnv) {
  return {
    name: "get_subagent_output",
    label: "Sub-agent output",
    description: "A sub-agent's full output by session id; steer or wait for a running one.",
    promptSnippet: "Fetch a sub-agent's full output by session id",
    parameters: OUTPUT_SCHEMA,
    async execute(_id: string, params: unknown, signal: AbortSignal | undefined, _onUpdate: unknown, ctx: ToolContext) {
      const problem = firstProblem(SCHEMAS.output, params);
      if (problem) throw new Error(`Invalid parameters: ${problem}`);
      const p = params as { sessionId: string; steer?: string; wait?: boolean };
      const session = env.sessions.for(ctx.sessionManager?.getSessionId?.());
      const notes = await steerAndWait(await env.services(), session, p.sessionId, p, signal);
      const { sessionId, record, last, maxLines } = await lookup(env, { sessionId: p.sessionId }, ctx);
      const ongoing = last.status === "running" || last.status === "queued";
      const output = ongoing
        ? `Sub-agent ${sessionId} is still ${last.status} (wait: true waits for its end).`
        : latestOutput(record);
      // A background child's spend reaches pi's totals with the first result that returns its output.
      const usage = ongoing ? undefined : backgroundUsage(session.takeBackgroundSpend(sessionId));
      return {
        content: [{ type: "text", text: [...notes, output].join("\n\n") }],
        details: { sessionId, status: last.status, taskName: record.name, runCount: record.runs.length, maxLines },
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
    description: "A sub-agent session's whole transcript (every run: messages, tool calls and results) by session id.",
    promptSnippet: "Read a sub-agent session's transcript by session id",
    parameters: SESSION_ID_SCHEMA,
    async execute(
      _id: string,
      params: unknown,
      _signal: AbortSignal | undefined,
      _onUpdate: unknown,
      ctx: ToolContext,
    ) {
      const { sessionId, rt, record, last, maxLines } = await lookup(env, params, ctx);
      const messages = new Map(record.runs.map((r) => [r.id, rt.store.getMessages(r.id)]));
      const messageCount = [...messages.values()].reduce((n, m) => n + m.length, 0);
      return {
        content: [{ type: "text", text: formatSessionTranscript(record, messages) }],
        details: {
          sessionId,
          status: last.status,
          taskName: record.name,
          messageCount,
          exitCode: last.exitCode,
          model: last.model,
          runCount: record.runs.length,
          maxLines,
        },
      };
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
    description: "List the named agents (profiles) for delegate_to_subagents and subagent.",
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
      // Files that could not be used are listed with their reason: otherwise a typo looks like a missing profile.
      const broken = diagnostics.map((d) => `✗ ${sanitize(d.file)}: ${d.reason}`);
      if (profiles.size === 0)
        return {
          content: [{ type: "text", text: [NO_PROFILES, ...broken].join("\n") }],
          details: { count: 0, broken: diagnostics.length },
        };
      const list = [...profiles.values()].sort((a, b) => a.name.localeCompare(b.name));
      const summaries: Record<string, string> = {};
      for (const p of list) summaries[p.name] = profileSummary(p);
      const flows = workflowLines(rt, ctx.cwd);
      const text = [
        ...list.map((p) => summaries[p.name]),
        ...(broken.length ? ["", "Not loaded:", ...broken] : []),
        ...flows,
      ].join("\n");
      return {
        content: [{ type: "text", text }],
        details: { count: list.length, profiles: summaries, broken: diagnostics.length },
      };
    },
    renderCall: (_args: unknown, theme: ThemeLike) => renderSimpleCall("list_subagent_profiles", "", theme),
    renderResult: (result: Result) => {
      const text = result.content?.[0]?.text ?? "";
      return lines((w) => text.split("\n").map((l) => clip(l, w)));
    },
  };
}
