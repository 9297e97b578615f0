// What runs one child (RunSpec) and the byte limits it runs under: shared by the runner and its parts.
import type { ChildEvent, Usage } from "../../types.ts";
import type { Budget, CallSpend } from "../../budget.ts";
import type { FinalizeMode } from "./finalize-contract.ts";
import type { RunState } from "./run-state.ts";
import { OUTPUT_CHARS, type Transport } from "./transport.ts";
import type { RateGate } from "./rate-gate.ts";
import type { GateSpec } from "./gate.ts";
import type { Reuse } from "./pool.ts";
import type { Asker, AskMode } from "./ask.ts";
import type { TeamMember } from "../../team.ts";

export type RunLimits = {
  /** Bytes a child may send on its event channel (fd 3, or stdout in json mode). */
  eventBytes: number;
  /** Bytes a child may write to stdout when stdout is not the event channel. */
  stdoutBytes: number;
  stderrBytes: number;
  stderrTail: number;
  /** Longest output kept in full (the store's copy); longer is cut with SUBAGENT_OUTPUT_TRUNCATED. */
  outputChars: number;
};

export const DEFAULT_LIMITS: RunLimits = {
  eventBytes: 64 * 1024 * 1024,
  stdoutBytes: 64 * 1024 * 1024,
  stderrBytes: 16 * 1024 * 1024,
  stderrTail: 8 * 1024,
  outputChars: OUTPUT_CHARS,
};
/** pi's JSON mode repeats the whole message per delta, so it legitimately sends far more. */
export const JSON_MODE_EVENT_BYTES = 1024 * 1024 * 1024;

export type RunSpec = {
  argv: string[];
  env: Record<string, string>;
  /** Handed to the child's fd 5 through a pipe, then closed (the sandbox reads its auth.json from it). */
  fd5?: string;
  /** The child's pi session file (--session): what a corrective message continues. */
  sessionFile: string;
  cwd: string;
  prompt: string;
  transport: Transport;
  finalize: FinalizeMode;
  timeoutSec: number;
  extendDebounceSec: number;
  maxRuntimeSec: number;
  loopingToolCount: number;
  /** Turns, tokens, dollars: reaching one gets the child a "wrap up" steer, then a stop (budget-watch.ts). */
  budget?: Budget;
  /** The call's rate-limit gate: told of this child's 429s and successes; its holds are sent to the child. */
  rateGate?: RateGate;
  /** The delegate call's shared maxCost, and this child's key in it. */
  callSpend?: { spend: CallSpend; key: string };
  /** Spent by earlier attempts of this task (a fallback model): counts against its budgets. */
  spentBefore?: Usage;
  limits?: Partial<RunLimits>;
  /** Grace after the final agent_end before the child is stopped (it normally exits by itself at once). */
  exitGraceMs?: number;
  /** The child's pi emits agent_settled (≥ 0.80.4): only that ends the run; agent_end may be followed by
   *  compaction recovery or queued messages that take longer than any grace. */
  settles?: boolean;
  killGraceMs?: number;
  signal?: AbortSignal;
  onEvent?: (state: RunState, ev: ChildEvent) => void;
  /** Another harness's stdout parser (runtimes/): its lines are read instead of pi's JSON mode. */
  parser?: () => { parse(line: string): ChildEvent[]; end?(exitCode: number | null): ChildEvent[] };
  /** Stopping also signals every descendant, not only the main process (CLIs that do not pass it on). */
  termTree?: boolean;
  onSpawn?: (pid: number) => void;
  /** Given: the child gets a control pipe (fd 4); called with its writer at each spawn and with null at exit. */
  onControl?: (send: ((line: string) => boolean) | null) => void;
  /** The task's place in its call's team (core/team.ts): its child's messages to siblings and theirs to it. */
  team?: TeamMember;
  /** Run on a kept child of the call (pool.ts) instead of a process of its own. */
  reuse?: Reuse;
  /** An acceptance gate: the child runs it (its env says which); only a passing attempt makes the run complete. */
  gate?: GateSpec;
  /** The child's questions (ask.ts): who answers, and the settings. Without it each is answered "no one can answer now". */
  ask?: { asker?: Asker; mode: AskMode; timeoutSec: number; sessionId: string; label: string };
  /** The task's session id: part of the mark its processes carry (marks.ts), so `subagents cancel ID` finds them. */
  sessionId?: string;
  /** Processes the child's commands leave running are kept (and recorded) instead of ended with the run. */
  keepProcesses?: boolean;
};
