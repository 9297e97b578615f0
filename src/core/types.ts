// Shared data shapes of the engine. Plain types only: no runtime imports (see test/unit/core/core.test.ts).
import type { IsolationResult } from "./isolation-types.ts";

export type Usage = {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
  turns: number;
};

export const emptyUsage = (): Usage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, turns: 0 });
export const addUsage = (a: Usage, b: Usage): Usage => ({
  input: a.input + b.input,
  output: a.output + b.output,
  cacheRead: a.cacheRead + b.cacheRead,
  cacheWrite: a.cacheWrite + b.cacheWrite,
  cost: a.cost + b.cost,
  turns: a.turns + b.turns,
});

/** What users see as a task's / session's status. */
export type TaskStatus = "queued" | "running" | "completed" | "error";

/** Error codes (docs/errors.md). */
export type ErrorCode =
  | "INVALID_INPUT"
  | "SUBAGENTS_DISABLED"
  | "UNKNOWN_AGENT"
  | "SUBAGENT_DEPTH_EXCEEDED"
  | "SUBAGENT_TIMEOUT"
  | "SUBAGENT_FAILED"
  | "SUBAGENT_OUTPUT_TRUNCATED"
  | "FINALIZE_MISSING"
  | "LOOP_DETECTED"
  | "SUBAGENT_CANCELLED"
  | "ISOLATION_FAILED"
  | "RUNNER_FAILED"
  /** The agent's runtime (another harness's CLI) is not installed here. */
  | "RUNTIME_MISSING"
  | "BUDGET_EXCEEDED"
  | "RATE_LIMITED"
  /** A task whose `after` dependency did not complete: it never started (dag.ts). */
  | "SKIPPED"
  /** The acceptance gate did not pass within its retries (gate.ts). */
  | "GATE_FAILED"
  /** An isolated task's setup command failed or timed out before its child started (task-setup.ts). */
  | "SETUP_FAILED"
  /** A call refused: it would start more children than subagents.maxSpawnsPerSession (or was not approved). */
  | "SPAWN_LIMIT"
  /** The session database cannot be used: read-only, damaged, written by a newer subagents (store/store-error.ts). */
  | "STORE_FAILED"
  /** No space left where the session database (or a task's files) must be written. */
  | "DISK_FULL";

export type FinalizePayload = { status: "SUCCESS" | "ERROR"; result?: string; error?: string; data?: unknown };

/** A tool call as the engine keeps it: name + arguments already shortened to a string. */
export type ToolCallInfo = { id: string; name: string; args: string };

/**
 * Engine events. Both transports (compact fd-3 lines from our child extension, and pi's `--mode json`)
 * are translated into exactly these, so the runner and everything above it do not know which was used.
 */
export type ChildEvent =
  | { type: "session"; id: string; file?: string }
  | { type: "turn_start" }
  | { type: "text"; delta: string }
  | { type: "tool_start"; id: string; name: string; args: string }
  | { type: "tool_end"; id: string; name: string; isError: boolean; result: string }
  | {
      type: "assistant";
      text: string;
      toolCalls: ToolCallInfo[];
      usage: Omit<Usage, "turns">;
      model?: string;
      provider?: string;
      stopReason?: string;
      errorMessage?: string;
      /** `text` is the first part of a longer answer (transport.ts cutText); `of`: its whole length, when known. */
      cut?: { of?: number };
    }
  | { type: "retry"; attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }
  /** `cut`: the payload's result is the first part of a longer one (its whole length). */
  | { type: "finalize"; payload: FinalizePayload; cut?: { of?: number } }
  /** A corrective message (finalize contract) reached the child's conversation. */
  | { type: "nudge" }
  | { type: "agent_end" }
  /** pi ≥ 0.80.4: no automatic work (retry, compaction recovery, queued messages) will follow. */
  | { type: "settled" }
  /** The provider answered "slow down" (429/529, or 503 with a delay); retryAfterMs when it said how long. */
  | { type: "rate_limit"; status: number; retryAfterMs?: number }
  /** A steer message from the owner reached the child's model context (delivered at a turn boundary). */
  | { type: "steered"; id: string; text: string }
  /** Another harness's own totals for the run so far (runtimes/): they replace what its turns reported. */
  | { type: "totals"; usage: Omit<Usage, "turns">; turns?: number }
  /** An acceptance gate attempt started / ended in the child (src/child-extension/gate.ts). */
  | { type: "gate_start"; attempt: number; command: string }
  | { type: "gate"; attempt: number; passed: boolean; exitCode: number | null; timedOut: boolean; output: string }
  /** A question for the owner (ask.ts): ask_parent or one of the child's extensions' dialogs. */
  | {
      type: "ask";
      id: string;
      kind: "confirm" | "select" | "input" | "ask_parent";
      title: string;
      message?: string;
      options?: string[];
    }
  /** The asking extension stopped waiting (its own timeout or signal): the question is closed. */
  | { type: "ask_closed"; id: string }
  /** A line for the child's window: an extension's notify, a question and its answer. */
  | { type: "note"; text: string }
  /** The child called send_message (core/team.ts): the owner routes it to its siblings and replies on the control pipe. */
  | { type: "message_send"; id: string; to: string; text: string }
  /** A sibling's message entered the child's conversation (delivered at a turn boundary, like a steer). */
  | { type: "message_in"; id: string; from: string; to: string; text: string };

/** One message as stored for transcripts (`get_subagent_session`). */
export type StoredMessage =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; toolCalls: { name: string; args: string }[]; error?: string }
  | { role: "toolResult"; name: string; text: string; isError: boolean };

/** The final outcome of one child run. */
export type RunResult = {
  status: "completed" | "error";
  /** Sanitized output: the finalized result (or partial result / last text on error). Never truncated. */
  output: string;
  error?: string;
  errorCode?: ErrorCode;
  finalize?: FinalizePayload;
  /** Whether the child called subagent_finalize (false: its plain final text is the output, or it failed). */
  finalized?: boolean;
  usage: Usage;
  model?: string;
  stopReason?: string;
  exitCode: number | null;
  sessionFile?: string;
  toolCount: number;
  messages: StoredMessage[];
  stderrTail: string;
  durationMs: number;
  /** Models that failed before `model` answered (fallbackModels), in order. */
  failedModels?: string[];
  /** What did not run as the agent file says (model substituted, tools missing): shown and recorded. */
  warnings?: string[];
  /** An isolated task's branch, changed files and diffstat (core/run/launch/isolation.ts). */
  isolation?: IsolationResult;
  /** The run's end could not be recorded (the session database failed: store/store-error.ts): what the fronts
   *  say on screen, and why the command's exit is a storage failure's. */
  recordError?: { code: ErrorCode; message: string };
  /** The acceptance gate's outcome (core/run/process/gate.ts): whether it passed, after how many runs. */
  gate?: { passed: boolean; attempts: number };
  /** The finalize call's `data` when the task has an outputSchema (the child's pi validated it). */
  structured?: unknown;
  /** It ran in a kept child (core/run/process/pool.ts) after other tasks of its call: which process, which task. */
  keptChild?: { pid: number; task: number };
};

/** A result that no child run produced (a task that ended before its child, an end read back from the store): the
 *  given fields over an empty run. A child's own result is the process runner's (process/runner.ts). */
export function runResult(fields: Pick<RunResult, "status"> & Partial<RunResult>): RunResult {
  return {
    output: "",
    usage: emptyUsage(),
    exitCode: null,
    toolCount: 0,
    messages: [],
    stderrTail: "",
    durationMs: 0,
    ...fields,
  };
}
