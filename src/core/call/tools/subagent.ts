// `subagent {agent, task, sessionId?}` (docs/pi-extension.md) from its parameters to a running call, for every front
// that serves it (pi, MCP): the parameters checked before any engine exists, then the tool's own checks (the depth,
// the agent, a sticky session of another agent), the call prepared, its one task refused as the whole call when its
// project-local agent may not run, and started the front's way.
import { subagentCall, subagentConsentRefusal, subagentParams, type SubagentParams } from "../subagent-call.ts";
import type { ToolFront, ToolRun } from "./front.ts";
import { engineOf, prepareAndStart, refusal } from "./start.ts";

export async function subagentFlow<R>(raw: unknown, front: ToolFront<R>): Promise<ToolRun<R, SubagentParams>> {
  const p = subagentParams(raw);
  if ("code" in p) return refusal("params", p);
  const engine = await engineOf(front);
  if ("refusal" in engine) return engine;
  const checked = subagentCall(engine, engine.profiles, p, front.cwd);
  if ("refusal" in checked) return refusal("call", checked.refusal);
  return prepareAndStart(engine, checked.request, front, p, subagentConsentRefusal);
}
