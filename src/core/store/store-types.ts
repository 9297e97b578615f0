// The session store's contract, shared by the SQLite store and the in-memory fallback.
import type { ErrorCode, FinalizePayload, RunResult, StoredMessage, Usage } from "../types.ts";
import type { IsolationResult } from "../isolation-types.ts";
import type { RunnerName } from "../runner-settings.ts";

/** `queued`: accepted by its call and listed, no child yet (the call runner records it before the front says
 *  "started"); `running` from the moment its child is about to start. */
export type RunStatus = "queued" | "running" | "completed" | "error";

export type RunRecord = {
  id: number;
  seq: number;
  prompt: string;
  status: RunStatus;
  exitCode: number | null;
  model?: string;
  usage: Usage;
  error?: string;
  errorCode?: ErrorCode;
  output: string;
  finalize?: FinalizePayload;
  /** Whether the child called subagent_finalize (false: a plain final text was its answer). */
  finalized?: boolean;
  toolCount: number;
  startedAt: number;
  endedAt?: number;
  ownerPid: number | null;
  /** The owner's start time (/proc/<pid>/stat field 22), so a PID the kernel gave to another process is not taken
   *  for it; null for runs recorded before it was kept, or where the system does not tell. */
  ownerStart: string | null;
  messageCount: number;
  /** Which pi ran it: `pi 0.87.1 · node 24.21.0 · /path` (absent for runs recorded before this was kept). */
  pi?: string;
  /** What did not run as the agent file says (model substituted, tools missing). */
  warnings?: string[];
  /** An isolated run's branch, changed files and diffstat. */
  isolation?: IsolationResult;
  /** Whether the child ran in the sandbox, and on which runner (absent for runs recorded before this was kept):
   * a resumed session runs the same way unless the task says otherwise. */
  sandbox?: boolean;
  runner?: RunnerName;
};

export type SessionRecord = {
  id: string;
  name: string;
  agent: string;
  cwd: string;
  status: RunStatus;
  sessionFile?: string;
  parentSession?: string;
  /** The schedule that started it (`subagents schedule`), when one did. */
  schedule?: string;
  createdAt: number;
  updatedAt: number;
  runs: RunRecord[];
};

export type SessionSummary = {
  id: string;
  name: string;
  agent: string;
  cwd: string;
  status: RunStatus;
  cost: number;
  /** Tokens of all its runs: input (without the cache's), output, read from and written to the provider's cache (a
   *  trace's gen_ai.usage.input_tokens is input + cacheRead + cacheWrite). */
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** Wall time of its ended runs, added up. */
  durationMs: number;
  runCount: number;
  /** Why the latest run did not complete (a skipped or cancelled one shows as such in lists). */
  lastErrorCode?: ErrorCode;
  /** The schedule that started it, when one did. */
  schedule?: string;
  createdAt: number;
  updatedAt: number;
};

/** What the runs of one agent, day or folder spent (`subagents usage`). */
export type UsageRow = {
  key: string;
  sessions: number;
  runs: number;
  failed: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost: number;
  /** Wall time of the ended runs, added up. */
  durationMs: number;
};

export type UsageBy = "agent" | "day" | "folder";

/** A session `prune` would delete. */
export type PruneCandidate = {
  id: string;
  name: string;
  agent: string;
  cwd: string;
  sessionFile?: string;
  updatedAt: number;
  runCount: number;
};

/** A run being started: `name` is the task name of this run, which becomes the session's (the latest run names it). */
export type NewRun = {
  prompt: string;
  ownerPid: number;
  /** The owner's start time (RunRecord.ownerStart). */
  ownerStart?: string | null;
  pi?: string;
  name?: string;
  sandbox?: boolean;
  runner?: RunnerName;
};

export type NewSession = {
  id: string;
  name: string;
  agent: string;
  cwd: string;
  parentSession?: string;
  sessionFile?: string;
  schedule?: string;
};

/** A finished (or interrupted) run as mirrored in a pi session, for rebuilding the store. */
export type ImportedRun = {
  sessionId: string;
  name: string;
  agent: string;
  cwd: string;
  prompt: string;
  status: RunStatus;
  output?: string;
  error?: string;
  errorCode?: string;
  finalized?: boolean;
  usage?: Usage;
  model?: string;
  exitCode?: number | null;
  sessionFile?: string;
  messages?: StoredMessage[];
  at: number;
};

/** A task accepted by its call, not started yet. */
export type QueuedRun = { prompt: string; ownerPid: number; ownerStart?: string | null; name: string };
/** The session database's file: SUBAGENTS_DB, else subagents.db in pi's agent dir (every front opens this one). */
export const storeFileOf = (env: Record<string, string | undefined>, agentDir: string): string =>
  env.SUBAGENTS_DB || `${agentDir.replace(/\/+$/, "")}/subagents.db`;

/** A run's owner: its PID and that process's start time (null: not known). */
export type RunOwner = { pid: number; start: string | null };
/** Whether a run's owner is still that process (not merely a process with its PID). */
export type OwnerAlive = (owner: RunOwner) => boolean;

/** The owner a record names, or null when it names none. */
export const ownerOf = (r: { ownerPid: number | null; ownerStart?: string | null }): RunOwner | null =>
  r.ownerPid === null ? null : { pid: r.ownerPid, start: r.ownerStart ?? null };

export interface SessionStore {
  newSessionId(): string;
  createSession(s: NewSession): void;
  /** Records a task its call accepted: a run with status queued, owned by `ownerPid`, in its session (created when
   *  new). Its owner starts it by its id (startQueued), or ends it unstarted (finishQueued). */
  queueRun(session: NewSession, run: QueuedRun): number;
  /** Starts the queued run of that id (its owner's task starts now). Refuses while another run of its session is
   *  running or queued under a live owner; throws when the run is not queued. */
  startQueued(runId: number, run: NewRun): void;
  /** Adds a run that starts now, to a session its call did not queue (tests, stores filled by hand). Refuses a
   *  session whose run is running or queued under a live owner. */
  startRun(sessionId: string, run: NewRun): number;
  /** Ends a run only while it is still queued: the one way a task that never started is recorded (refused, skipped,
   *  not prepared, a schedule that could not run). */
  finishQueued(runId: number, result: RunResult): void;
  /** Stores messages from index `from` on of a run still going, so its transcript shows what happened so far. */
  checkpointRun(runId: number, messages: StoredMessage[], from: number): void;
  finishRun(runId: number, result: RunResult): void;
  /** What a run's isolated worktree is now (made; its changes kept on a branch): told as it changes, so a run whose
   *  owner was killed still names its worktree, then the branch the clean-up made of it. */
  setRunIsolation(runId: number, isolation: IsolationResult): void;
  /** Adds warnings to a run, running or ended (a task hook's trouble arrives when it does); finishRun keeps them. */
  addRunWarnings(runId: number, warnings: string[]): void;
  setSessionFile(sessionId: string, file: string): void;
  getSession(id: string): SessionRecord | null;
  getMessages(runId: number): StoredMessage[];
  listSessions(opts: { limit: number; offset?: number }): SessionSummary[];
  /** Ends the runs recorded running or queued whose owner is gone (interrupted; never started). */
  recoverStale(): number;
  /** Whether a run's owner is still that process: the one judgement this store's startRun and recoverStale go by,
   *  so a resume check made before them never disagrees with them. */
  ownerAlive(owner: RunOwner): boolean;
  /** Throws a StoreError when a call's records could not be written (read-only, no space): checked before a call
   *  starts anything. */
  checkWritable?(): void;
  /** Marks a run failed with a short record (status, error and its code only): the end of a run whose full
   *  record could not be written (a full disk has room for a small write more often than for the output). */
  failRun?(runId: number, error: string, code: string): void;
  /** Adds runs of a session that this store does not know yet (all-or-nothing per session). */
  importRuns(runs: ImportedRun[]): void;
  /** Whether any session of ours ran in `folder` or below it (pi's retrieval tools are worth declaring there). */
  hasSessionsIn?(folder: string): boolean;
  /** Children started by one parent pi session (running ones included) and what the ended ones cost (caps). */
  parentUsage(parentSession: string): { spawns: number; cost: number };
}

/** Error codes of runs refused before any child started (they made no model turn): not counted as spawns. */
export const NOT_STARTED_CODES = [
  "INVALID_INPUT",
  "ISOLATION_FAILED",
  "SETUP_FAILED",
  "BUDGET_EXCEEDED",
  "SPAWN_LIMIT",
  "SUBAGENT_CANCELLED",
];

export function startedChild(r: Pick<RunRecord, "status" | "exitCode" | "errorCode" | "usage" | "error">): boolean {
  if (r.status === "queued" || r.error === NEVER_STARTED_MESSAGE) return false;
  return !(
    r.status === "error" &&
    r.exitCode === null &&
    r.usage.turns === 0 &&
    NOT_STARTED_CODES.includes(r.errorCode ?? "")
  );
}

/** A run its session's next run must wait for: running, or queued, under an owner that is still that process. */
export function busyRun(r: Pick<RunRecord, "status" | "ownerPid" | "ownerStart"> | undefined, isAlive: OwnerAlive) {
  if (!r || (r.status !== "running" && r.status !== "queued")) return false;
  const owner = ownerOf(r);
  return owner === null || isAlive(owner);
}

export const INTERRUPTED_MESSAGE = "Session was interrupted (main agent session ended unexpectedly)";
/** A queued run whose owner is gone: its task never started and nobody will start it (the next store to open says
 *  so: recoverStale). Not a spawn. */
export const NEVER_STARTED_MESSAGE = "never started: its owner ended first";

export function newSessionId(): string {
  const bytes = new Uint8Array(8);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export const resumeRunningMessage = (id: string) =>
  `Cannot resume: session "${id}" is still running. Wait for it to complete before resuming.`;

export const MESSAGE_TEXT_CAP = 1024 * 1024;
export const TOOL_RESULT_CAP = 2000;

export function capMessage(m: StoredMessage): StoredMessage {
  const cap = m.role === "toolResult" ? TOOL_RESULT_CAP : MESSAGE_TEXT_CAP;
  return m.text.length > cap ? { ...m, text: `${m.text.slice(0, cap)}…` } : m;
}

/** A session still in flight (running, or queued in a live owner), with who owns it: control/running.ts lists them,
 * ui/fleet.ts shows them. */
export type RunningRow = {
  id: string;
  name: string;
  agent: string;
  status: "running" | "queued";
  ownerPid: number | null;
  role: string;
  startedAt: number | null;
  after?: string[];
};
