// get_subagent_output, get_subagent_session and list_subagent_profiles over MCP: the same text as inside pi
// (ui/retrieval.ts). A session of any owner is reached — this server's, a pi session's, the CLI's — through the
// owner registry, as `subagents steer` and `wait` do.
import { steerAndWaitNotes } from "../control/actions.ts";
import { firstProblem, SCHEMAS } from "../core/call/schemas.ts";
import { workflowLines } from "../core/call/workflow.ts";
import { outputResult, profilesResult, recordedSession, sessionResult } from "../ui/retrieval.ts";
import { callCwd, clientRoots } from "./client.ts";
import type { ToolContext, ToolOutcome } from "./protocol/session.ts";
import { inputRequired, type ToolResult } from "./protocol/wire.ts";
import type { RunDeps } from "./tool-run.ts";

const text = (t: string, isError = false): ToolResult => ({
  content: [{ type: "text", text: t }],
  ...(isError ? { isError } : {}),
});

/** The tool's text, or its error as an error result (never a protocol error: the model reads why). */
async function answer(fn: () => Promise<string> | string): Promise<ToolResult> {
  try {
    return text(await fn());
  } catch (err) {
    return text((err as Error).message, true);
  }
}

function checked(schema: (typeof SCHEMAS)[keyof typeof SCHEMAS], params: unknown): void {
  const problem = firstProblem(schema, params);
  if (problem) throw new Error(`Invalid parameters: ${problem}`);
}

export function outputHandler(d: RunDeps, raw: unknown, ctx: ToolContext): Promise<ToolResult> {
  return answer(async () => {
    checked(SCHEMAS.output, raw);
    const p = raw as { sessionId: string; steer?: string; wait?: boolean };
    const notes = await steerAndWaitNotes(d.services, p.sessionId, p, ctx.signal);
    return outputResult(recordedSession(d.services.store, p.sessionId), notes).text;
  });
}

export function sessionHandler(d: RunDeps, raw: unknown): Promise<ToolResult> {
  return answer(() => {
    checked(SCHEMAS.sessionId, raw);
    const { store } = d.services;
    return sessionResult(store, recordedSession(store, (raw as { sessionId: string }).sessionId)).text;
  });
}

/** The profiles of the folder a call would run in (the client's roots decide it, as for a call). */
export async function profilesHandler(d: RunDeps, ctx: ToolContext): Promise<ToolOutcome> {
  const roots = clientRoots(ctx, d.calls.stateOf(ctx).roots === true);
  if ("ask" in roots) return inputRequired(roots.ask, d.calls.codec.mint({ roots: true }));
  const cwd = callCwd(d.services.cwd, roots.roots);
  return answer(() => {
    const { profiles, diagnostics } = d.services.profilesFor(cwd);
    return profilesResult(profiles, diagnostics, workflowLines(d.services, cwd)).text;
  });
}
