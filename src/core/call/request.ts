// What every front hands the call module: its input turned into one request (the tasks as the delegate input
// names them, plus the call's defaults: the CLI's flags, the pi tool's call-level fields), and the one shape a
// refusal takes. The tasks are resolved in one place (resolve.ts), so a field one front honours, all honour.
import type { Budget } from "../budget.ts";
import type { DelegateParams } from "../delegate-input.ts";
import type { DelegateTask } from "../task-fields.ts";
import type { IsolationMode } from "../isolation-types.ts";
import type { RunnerName } from "../runner-settings.ts";
import type { RuntimeName } from "../runtime-names.ts";
import type { ErrorCode } from "../types.ts";
import type { FinalizeMode } from "../run/process/finalize-contract.ts";

/** A task of a call: the delegate input's fields, and a session id the front chose (the `subagent` tool's sticky id). */
export type CallTask = DelegateTask & { sessionId?: string };

/** What applies to every task that does not say otherwise. */
export type CallDefaults = {
  /** The front's folder: the shell's (or --cwd), pi's cwd. */
  cwd: string;
  profile?: string;
  model?: string;
  timeout?: number;
  isolation?: IsolationMode;
  sandbox?: boolean;
  runner?: RunnerName;
  runtime?: RuntimeName;
  budget?: Budget;
  gate?: string;
  gateTimeout?: number;
  gateRetries?: number;
  /** `--fork SESSION` in the CLI: every task starts from that conversation unless it says `context: "fresh"`. */
  context?: "fork" | "fresh";
  /** The front's finalize contract (the `subagent` tool requires one). */
  finalize?: FinalizeMode;
};

export type CallRequest = {
  tasks: CallTask[];
  defaults: CallDefaults;
  /** The call's shared spend limit (scheduler.ts). */
  maxCost?: number;
  background?: boolean;
  concurrency?: number;
  /** The folders an MCP client gave as its roots: every task's folder must lie in one (by real paths: folders.ts). */
  roots?: string[];
};

/** delegate_to_subagents' parameters (a saved workflow's already in place) as a request: the same in every front
 *  that serves the tool (pi, MCP). */
export function delegateToolRequest(params: DelegateParams, cwd: string): CallRequest {
  return {
    tasks: params.tasks,
    defaults: { cwd, ...(params.profile ? { profile: params.profile } : {}) },
    maxCost: params.maxCost,
    background: params.background,
  };
}

/** Why a call did not start: one shape for every front (each renders it its own way). */
export type Refusal = { code: ErrorCode; message: string };
