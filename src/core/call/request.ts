// What every front hands the call module: its input turned into one request (the tasks as the delegate input
// names them, plus the call's defaults: the CLI's flags, the pi tool's call-level fields), and the one shape a
// refusal takes. The tasks become TaskInputs here and nowhere else, so a field one front honours, all honour.
import type { Budget } from "../budget.ts";
import type { DelegateParams } from "../delegate-input.ts";
import type { DelegateTask } from "../task-fields.ts";
import type { IsolationMode } from "../isolation-types.ts";
import type { RunnerName } from "../runner-settings.ts";
import type { RuntimeName } from "../runtime-names.ts";
import type { ErrorCode } from "../types.ts";
import type { FinalizeMode } from "../run/process/finalize-contract.ts";
import type { TaskInput } from "../run/task-types.ts";

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

const defined = <T extends Record<string, unknown>>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/** A task's own field wins over the call's default; budgets merge key by key (the task's win). */
export function toTaskInput(t: CallTask, d: CallDefaults, newSessionId: () => string): TaskInput {
  const budget = { ...d.budget, ...t.budget };
  return defined<TaskInput>({
    name: t.name,
    prompt: t.prompt,
    cwd: t.cwd ?? d.cwd,
    profile: t.profile ?? d.profile,
    model: d.model,
    timeoutSec: t.timeout ?? d.timeout,
    resume: t.resume,
    files: t.files,
    sessionId: t.resume ?? t.sessionId ?? newSessionId(),
    isolation: t.isolation ?? d.isolation,
    budget: Object.keys(budget).length ? budget : undefined,
    after: t.after,
    gate: t.gate ?? d.gate,
    gateTimeout: t.gateTimeout ?? d.gateTimeout,
    gateRetries: t.gateRetries ?? d.gateRetries,
    outputSchema: t.outputSchema,
    keepProcesses: t.keepProcesses,
    sandbox: t.sandbox || d.sandbox || undefined,
    runner: t.runner ?? d.runner,
    runtime: t.runtime ?? d.runtime,
  });
}

export function toTaskInputs(request: CallRequest, newSessionId: () => string): TaskInput[] {
  return request.tasks.map((t) => toTaskInput(t, request.defaults, newSessionId));
}

/** Whether each task starts from the parent's conversation: its own `context`, else the call's. */
export const contextOf = (request: CallRequest) =>
  request.tasks.map((t) => ({ context: t.context ?? request.defaults.context }));
