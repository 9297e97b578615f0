// The part every tool that runs sub-agents shares once its request is made: the engine, the call's preparation on
// it, and the start, each refusing in the one shape (front.ts ToolRefusal).
import type { Engine } from "../../run/engine.ts";
import { prepareCall, type PreparedCall } from "../prepare.ts";
import type { CallRequest, Refusal } from "../request.ts";
import type { ToolFront, ToolRefusal, ToolRun } from "./front.ts";

export const refusal = (
  stage: ToolRefusal["stage"],
  r: Refusal & { mode?: "management" },
  tool?: string,
): { refusal: ToolRefusal } => ({
  refusal: {
    code: r.code,
    message: tool ? `Invalid ${tool} call: ${r.message}` : r.message,
    stage,
    reason: r.message,
    ...(r.mode ? { mode: r.mode } : {}),
  },
});

/** The call's engine, or why there is none (no pi can run the children). */
export async function engineOf<R>(front: ToolFront<R>): Promise<Engine | { refusal: ToolRefusal }> {
  try {
    return await front.engine();
  } catch (err) {
    const why = (err as Error).message;
    const r = refusal("engine", { code: "SUBAGENT_FAILED", message: `Cannot start a sub-agent: ${why}` });
    return { refusal: { ...r.refusal, reason: why } };
  }
}

/** The request prepared on the engine (the front's roots checked with it), then started the front's way; `check`:
 *  what the tool refuses of a prepared call besides. */
export async function prepareAndStart<R, P>(
  engine: Engine,
  request: CallRequest,
  front: ToolFront<R>,
  params: P,
  check?: (call: PreparedCall) => (Refusal & { mode?: "management" }) | null,
): Promise<ToolRun<R, P>> {
  const withRoots = front.roots ? { ...request, roots: front.roots } : request;
  const prepared = await prepareCall(engine, withRoots, await front.prepare(engine));
  if ("refusal" in prepared) return refusal("call", prepared.refusal);
  const refused = check?.(prepared.call);
  if (refused) return refusal("call", refused);
  const started = await front.start(engine, prepared.call, !!request.background);
  if ("refusal" in started) return refusal("call", started.refusal);
  return { params, engine, call: prepared.call, running: started.running };
}
