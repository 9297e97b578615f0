// get_subagent_output, get_subagent_session and list_subagent_profiles over MCP: the tools' flows
// (core/call/tools/retrieval.ts) and the same text as inside pi (ui/retrieval.ts). A session of any owner is reached
// — this server's, a pi session's, the CLI's — through the owner registry, as `subagents steer` and `wait` do.
import { steerAndWaitNotes } from "../control/actions.ts";
import { outputFlow, profilesFlow, sessionFlow } from "../core/call/tools/retrieval.ts";
import { outputResult, profilesResult, sessionResult } from "../ui/retrieval.ts";
import { callCwd, clientRoots } from "./client.ts";
import type { ToolContext, ToolOutcome } from "./protocol/session.ts";
import { inputRequired, type ToolResult } from "./protocol/wire.ts";
import type { RunDeps } from "./tool-run.ts";

const text = (t: string, isError = false): ToolResult => ({
  content: [{ type: "text", text: t }],
  ...(isError ? { isError } : {}),
});

/** The tool's text, or its refusal as an error result (never a protocol error: the model reads why). */
async function answer(fn: () => Promise<string | { refusal: { message: string } }>): Promise<ToolResult> {
  try {
    const r = await fn();
    return typeof r === "string" ? text(r) : text(r.refusal.message, true);
  } catch (err) {
    return text((err as Error).message, true);
  }
}

export function outputHandler(d: RunDeps, raw: unknown, ctx: ToolContext): Promise<ToolResult> {
  return answer(async () => {
    const steerAndWait = (id: string, o: { steer?: string; wait?: boolean }, signal?: AbortSignal) =>
      steerAndWaitNotes(d.services, id, o, signal);
    const found = await outputFlow(raw, { store: d.services.store, steerAndWait }, ctx.signal);
    return "refusal" in found ? found : outputResult(found.record, found.notes).text;
  });
}

export function sessionHandler(d: RunDeps, raw: unknown): Promise<ToolResult> {
  return answer(async () => {
    const { store } = d.services;
    const found = sessionFlow(raw, store);
    return "refusal" in found ? found : sessionResult(store, found.record).text;
  });
}

/** The profiles of the folder a call would run in (the client's roots decide it, as for a call). */
export async function profilesHandler(d: RunDeps, ctx: ToolContext): Promise<ToolOutcome> {
  const roots = clientRoots(ctx, d.calls.stateOf(ctx).roots === true);
  if ("ask" in roots) return inputRequired(roots.ask, d.calls.codec.mint({ roots: true }));
  const cwd = callCwd(d.services.cwd, roots.roots);
  return answer(async () => {
    const { profiles, diagnostics, workflows } = profilesFlow(d.services, cwd);
    return profilesResult(profiles, diagnostics, workflows).text;
  });
}
