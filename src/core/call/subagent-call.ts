// The `subagent` tool's call (docs/pi-extension.md): its parameters checked and turned into the call module's
// request, the same for every front that serves the tool (pi, MCP). Sticky sessions: an id the store knows is
// resumed; one it does not know (another pi session, a store kept in memory, or one the caller chose) starts that
// sticky session — the child's session file is named by cwd, agent and id, so pi continues it when it is on disk.
import type { Engine } from "../run/engine.ts";
import { profileRefusal } from "../run/task-error.ts";
import type { Profile } from "../profiles/profile.ts";
import type { PreparedCall } from "./prepare.ts";
import type { CallRequest, Refusal } from "./request.ts";
import { firstProblem, SCHEMAS } from "./schemas.ts";

/** A caller-chosen session id becomes part of a file name: no separators, no dots. */
const STICKY_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export type SubagentParams = {
  agent: string;
  task: string;
  sessionId?: string;
  isolation?: "worktree";
  background?: boolean;
};

/** A refusal of the tool; `management` marks the ones about the tool itself rather than the task (the depth). */
export type SubagentRefusal = Refusal & { mode?: "management" };

/** The parameters, or why they are not a call (checked before any engine exists). */
export function subagentParams(params: unknown): SubagentParams | SubagentRefusal {
  const problem = firstProblem(SCHEMAS.subagent, params);
  if (problem) return { code: "INVALID_INPUT", message: `Invalid subagent call: ${problem}` };
  const p = params as SubagentParams;
  if (p.sessionId !== undefined && !STICKY_ID.test(p.sessionId))
    return {
      code: "INVALID_INPUT",
      message: `Invalid subagent call: sessionId "${p.sessionId}" may only hold letters, digits, "-" and "_" (at most 128).`,
    };
  return p;
}

/** One named agent's task as the call module's request; `resume` when the store knows the sticky session. */
export function subagentRequest(p: SubagentParams, resume: string | undefined, cwd: string): CallRequest {
  const t = {
    name: p.agent,
    prompt: p.task,
    profile: p.agent,
    ...(resume ? { resume } : {}),
    ...(p.sessionId ? { sessionId: p.sessionId } : {}),
    ...(p.isolation ? { isolation: p.isolation } : {}),
  };
  return { tasks: [t], defaults: { cwd, finalize: "required" }, background: p.background };
}

/** The request for this engine, or why the tool refuses it: depth, an unknown or unusable agent, a session of
 * another agent. */
export function subagentCall(
  engine: Engine,
  profiles: Map<string, Profile>,
  p: SubagentParams,
  cwd: string,
): { request: CallRequest } | { refusal: SubagentRefusal } {
  const { depth } = engine;
  if (depth >= engine.settings.maxDepth)
    return {
      refusal: {
        code: "SUBAGENT_DEPTH_EXCEEDED",
        message: `Sub-agent depth limit reached (depth ${depth}, maxDepth ${engine.settings.maxDepth}): sub-agents cannot start further sub-agents.`,
        mode: "management",
      },
    };
  if (!profiles.has(p.agent)) {
    const refused = profileRefusal(engine, p.agent);
    if (refused.code !== "UNKNOWN_AGENT") return { refusal: { code: refused.code, message: refused.message } };
    const available = [...profiles.keys()].sort().join(", ") || "(none)";
    return { refusal: { code: "UNKNOWN_AGENT", message: `Unknown agent: ${p.agent}. Available agents: ${available}` } };
  }
  const known = p.sessionId ? engine.store.getSession(p.sessionId) : null;
  if (known && known.agent !== p.agent)
    return {
      refusal: {
        code: "INVALID_INPUT",
        message: `Session "${p.sessionId}" belongs to agent "${known.agent}", not "${p.agent}".`,
      },
    };
  const resume = known && known.runs.length > 0 ? p.sessionId : undefined;
  return { request: subagentRequest(p, resume, cwd) };
}

/** The tool runs one task: when its project-local agent may not run here (no consent), the call itself fails
 * (delegate_to_subagents fails that task alone). */
export function subagentConsentRefusal(call: Pick<PreparedCall, "refused">): SubagentRefusal | null {
  return call.refused[0] ?? null;
}
