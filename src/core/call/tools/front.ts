// What a front gives the tools' flows (delegate.ts, subagent.ts, retrieval.ts), and what a flow gives back. The flow
// is the tool's one way from parameters to a running call — its checks, its refusals, its order — for every front
// that serves it (pi, MCP, the CLI's `flow` and `delegate`); each front only asks in its own way (a dialog, a
// terminal, nobody), starts the call its own way (in the foreground with its rendering, in the background, as an
// MCP task) and renders what comes back.
import type { ConsentContext } from "../workflow.ts";
import type { DelegateParams } from "../../delegate-input.ts";
import type { Engine } from "../../run/engine.ts";
import type { CallFront, PreparedCall } from "../prepare.ts";
import type { CallRequest, Refusal } from "../request.ts";

/** Why a tool did not start anything, and where it was refused. */
export type ToolRefusal = Refusal & {
  /** `params`: its parameters (pi throws these as tool errors; a CLI command exits 2); `consent`: a project file the
   *  user did not allow; `engine`: no engine (no pi to run the children); `call`: the call's checks or caps. */
  stage: "params" | "consent" | "engine" | "call";
  /** The refusal without the tool's name (`Invalid delegate_to_subagents call: …`), for a front that is no tool. */
  reason: string;
  /** About the tool itself rather than its task (the depth limit): `subagent`'s result says so. */
  mode?: "management";
};

export type ToolFront<R> = {
  /** The call's folder: pi's cwd, the one an MCP client's roots give, the shell's. */
  cwd: string;
  /** An MCP client's roots: every task's folder must lie in one of them. */
  roots?: string[] | null;
  /** The call's engine, made once per call (throws when no pi can run the children). */
  engine(): Engine | Promise<Engine>;
  /** What the front gives the call's preparation: a conversation to fork, consent, its caps, the fan-out question. */
  prepare(engine: Engine): CallFront | Promise<CallFront>;
  /** Who is asked before a project workflow runs (nobody: refused unless subagents.projectAgents allows it), and
   *  the ones already allowed in this front's session. */
  consent: ConsentContext & { allowed?: Set<string> };
  /** The call's request from the tool's parameters; unset: the tool's own (a front with flags of its own adds them). */
  request?(params: DelegateParams, cwd: string): CallRequest;
  /** Starts the prepared call the front's own way: what it runs as, or why its caps refuse it. */
  start(engine: Engine, call: PreparedCall, background: boolean): Promise<{ running: R } | { refusal: Refusal }>;
};

/** A tool's flow to its end: refused before anything started, or its call running (`running`, the front's own). */
export type ToolRun<R, P> = { refusal: ToolRefusal } | { params: P; engine: Engine; call: PreparedCall; running: R };
