// delegate_to_subagents (docs/pi-extension.md) from its parameters to a running call, for every front that serves it
// (pi, MCP, and the CLI's `delegate` and `flow`, whose arguments are the same document): a saved workflow read in
// place of `tasks` (a project one asked about the front's way), the parameters checked, the engine, the request (the
// front's flags added where it has any), the call prepared and started the front's way.
import { InputError, parseDelegateParams, type DelegateParams } from "../../delegate-input.ts";
import type { Engine } from "../../run/engine.ts";
import { delegateToolRequest } from "../request.ts";
import { withWorkflow, WorkflowRefusal } from "../workflow.ts";
import type { ToolFront, ToolRefusal, ToolRun } from "./front.ts";
import { engineOf, prepareAndStart, refusal } from "./start.ts";

const TOOL = "delegate_to_subagents";

const isRefused = (x: unknown): x is { refusal: ToolRefusal } => !!x && typeof x === "object" && "refusal" in x;

export async function delegateFlow<R>(raw: unknown, front: ToolFront<R>): Promise<ToolRun<R, DelegateParams>> {
  // Made once, and only when needed before the call (a workflow is read with the engine the call then runs on).
  let made: Promise<Engine | { refusal: ToolRefusal }> | undefined;
  const engine = () => (made ??= engineOf(front));
  let params: DelegateParams;
  try {
    const document = await withWorkflow(
      raw,
      front.consent,
      async () => {
        const e = await engine();
        if (isRefused(e)) throw e;
        return e;
      },
      front.consent.allowed,
    );
    params = parseDelegateParams(document);
  } catch (err) {
    if (isRefused(err)) return err;
    if (err instanceof WorkflowRefusal && err.consent)
      return refusal("consent", { code: "INVALID_INPUT", message: err.message });
    if (err instanceof InputError || err instanceof WorkflowRefusal)
      return refusal("params", { code: "INVALID_INPUT", message: err.message }, TOOL);
    throw err;
  }
  const ready = await engine();
  if (isRefused(ready)) return ready;
  const request = front.request?.(params, front.cwd) ?? delegateToolRequest(params, front.cwd);
  return prepareAndStart(ready, request, front, params);
}
