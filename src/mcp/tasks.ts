// The Tasks extension (`io.modelcontextprotocol/tasks`, specification 2026-07-28; docs/mcp.md "Tasks"): a call of
// `delegate_to_subagents` or `subagent` from a client that declares it is answered at once with a task handle, and
// the client follows it with `tasks/get` (state, progress line, the children's questions as input requests, the
// result), answers questions with `tasks/update`, and stops it with `tasks/cancel` (the kill protocol). A task's id
// is the session id of its call's first task, so `subagents sessions`, `attach`, `get_subagent_output` know it;
// task-index.ts keeps which sessions it is, so a server started later answers for it from the records. A task
// lives TASK_TTL_MS from its creation: then it is forgotten, and one still running is cancelled (nobody could
// collect it any more).
import { cancelledBy } from "../core/run/process/abort-reason.ts";
import type { AskAnswer, Asker, AskRequest } from "../core/run/process/ask.ts";
import type { SessionStore } from "../core/store/store-types.ts";
import { busyRun } from "../core/store/store-types.ts";
import type { TaskOutcome } from "../core/run/task-types.ts";
import { outcomeOf } from "../ui/recorded.ts";
import type { CallRun } from "./call-adapter.ts";
import { progressMessage } from "./progress.ts";
import type { TaskHost } from "./protocol/session.ts";
import { ERR, type InputRequest, type TaskStatus, type TaskView, type ToolResult, WireError } from "./protocol/wire.ts";
import { answerOf, elicitation } from "./questions.ts";
import type { IndexedTask, TaskIndex, TaskKind } from "./task-index.ts";

/** How long a task is kept from its creation (its result too): a day, for a delegation left running overnight. */
export const TASK_TTL_MS = 86_400_000;
/** How often a client is asked to poll: a task's progress line changes every second. */
export const POLL_INTERVAL_MS = 1000;
const SWEEP_MS = 60_000;

type Question = { q: AskRequest; resolve(a: AskAnswer): void };

type Task = {
  id: string;
  kind: TaskKind;
  sessions: string[];
  createdAt: number;
  updatedAt: number;
  run?: CallRun;
  status: TaskStatus;
  result?: ToolResult;
  error?: { code: number; message: string };
  cancelled?: boolean;
  /** The children's open questions by input-request key (`q1`, `q2`…: a key is never used twice in a task). */
  questions: Map<string, Question>;
  asked: number;
};

export type TasksOptions = {
  store: SessionStore;
  index: TaskIndex;
  /** A tool's result from its tasks' outcomes (live, or read back from the records). */
  results: Record<TaskKind, (outcomes: TaskOutcome[]) => ToolResult>;
  /** Cancels a session another process owns (`subagents cancel`'s way). */
  cancelElsewhere(sessionId: string): Promise<unknown>;
  ttlMs?: number;
  now?: () => number;
};

const notFound = () => new WireError(ERR.invalidParams, "Failed to retrieve task: Task not found");
const expired = () => new WireError(ERR.invalidParams, "Failed to retrieve task: Task has expired");
const terminal = (s: TaskStatus) => s === "completed" || s === "failed" || s === "cancelled";

export class McpTasks implements TaskHost {
  private readonly tasks = new Map<string, Task>();
  /** Tasks forgotten at the end of their time to live (the last ones): asked for, they say so. */
  private readonly expiredIds = new Set<string>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly o: TasksOptions) {
    this.ttlMs = o.ttlMs ?? TASK_TTL_MS;
    this.now = o.now ?? Date.now;
  }

  /** A task for a prepared call (its sessions, in the call's order), and the asker its children's questions go to. */
  open(kind: TaskKind, sessions: string[]): { task: Task; asker: Asker } {
    const at = this.now();
    const task: Task = {
      id: sessions[0],
      kind,
      sessions,
      createdAt: at,
      updatedAt: at,
      status: "working",
      questions: new Map(),
      asked: 0,
    };
    const asker: Asker = (q) =>
      new Promise((resolve) => {
        const key = `q${++task.asked}`;
        task.questions.set(key, { q, resolve });
        this.touch(task);
        // Answered elsewhere (`subagents answer`, a steer), timed out, or its run ended: no longer the client's.
        q.signal.addEventListener(
          "abort",
          () => {
            if (task.questions.delete(key)) this.touch(task);
          },
          { once: true },
        );
      });
    return { task, asker };
  }

  /** The task's run has started: it is recorded (so `tasks/get` finds it from now on) and its handle returned. */
  start(task: Task, run: CallRun): TaskView {
    task.run = run;
    this.o.index.write(task.id, {
      kind: task.kind,
      sessions: task.sessions,
      createdAt: task.createdAt,
      ttlMs: this.ttlMs,
    });
    this.tasks.set(task.id, task);
    run.listeners.add(() => this.touch(task));
    run.outcomes.then(
      (outcomes) => {
        task.status = task.cancelled ? "cancelled" : "completed";
        if (!task.cancelled) task.result = this.o.results[task.kind](outcomes);
        task.questions.clear();
        this.touch(task);
      },
      (err: Error) => {
        task.status = "failed";
        task.error = { code: ERR.internal, message: err.message };
        this.touch(task);
      },
    );
    this.sweeper ??= setInterval(() => {
      this.expire();
      this.o.index.sweep(this.now());
    }, SWEEP_MS);
    this.sweeper.unref?.();
    return this.view(task);
  }

  get(taskId: string): TaskView {
    this.expire();
    const task = this.tasks.get(taskId);
    if (task) return this.view(task);
    return this.recorded(taskId);
  }

  update(taskId: string, inputResponses: Record<string, unknown>): void {
    const task = this.tasks.get(taskId);
    if (!task) {
      this.recorded(taskId);
      return;
    }
    // Keys that are not outstanding (never asked, answered already, withdrawn) are ignored.
    for (const [key, response] of Object.entries(inputResponses)) {
      const open = task.questions.get(key);
      if (!open) continue;
      task.questions.delete(key);
      open.resolve(answerOf(response));
    }
    this.touch(task);
  }

  cancel(taskId: string): void {
    const task = this.tasks.get(taskId);
    if (!task) {
      // A task of an earlier server: what of it still runs is stopped through its owner, as `subagents cancel` does.
      this.recorded(taskId);
      for (const id of this.o.index.read(taskId)?.sessions ?? []) void this.o.cancelElsewhere(id).catch(() => {});
      return;
    }
    if (terminal(task.status) || task.cancelled) return;
    task.cancelled = true;
    task.run?.abort(cancelledBy("Cancelled: the MCP client cancelled the task"));
  }

  /** Stops every task's timer (the server is going away; the runs are stopped with the server's calls). */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private touch(task: Task): void {
    task.updatedAt = this.now();
    if (!terminal(task.status)) task.status = task.questions.size ? "input_required" : "working";
  }

  /** Forgets tasks past their time to live; one still running is cancelled. */
  private expire(): void {
    const now = this.now();
    for (const task of this.tasks.values()) {
      if (task.createdAt + this.ttlMs >= now) continue;
      this.tasks.delete(task.id);
      this.o.index.remove(task.id);
      this.expiredIds.add(task.id);
      if (this.expiredIds.size > 1000) this.expiredIds.delete(this.expiredIds.values().next().value as string);
      if (!terminal(task.status)) task.run?.abort(cancelledBy("Cancelled: its MCP task's time to live ended"));
    }
  }

  private times(createdAt: number, updatedAt: number) {
    return {
      createdAt: new Date(createdAt).toISOString(),
      lastUpdatedAt: new Date(updatedAt).toISOString(),
      ttlMs: this.ttlMs,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
  }

  private view(task: Task): TaskView {
    const base = { taskId: task.id, status: task.status, ...this.times(task.createdAt, task.updatedAt) };
    switch (task.status) {
      case "completed":
        return {
          ...base,
          statusMessage: task.run ? progressMessage(task.run, this.now()) : undefined,
          result: task.result,
        };
      case "failed":
        return { ...base, statusMessage: `Failed: ${task.error?.message}`, error: task.error };
      case "cancelled":
        return { ...base, statusMessage: "Cancelled by the MCP client: its sub-agents were stopped" };
      default: {
        const requests: Record<string, InputRequest> = {};
        for (const [key, { q }] of task.questions) requests[key] = elicitation(q);
        return {
          ...base,
          ...(task.run ? { statusMessage: progressMessage(task.run, this.now()) } : {}),
          ...(task.status === "input_required" ? { inputRequests: requests } : {}),
        };
      }
    }
  }

  /** A task this server did not start (or has forgotten), from its index entry and its sessions' records. */
  private recorded(taskId: string): TaskView {
    const entry: IndexedTask | null = this.o.index.read(taskId);
    if (!entry) throw this.expiredIds.has(taskId) ? expired() : notFound();
    if (entry.createdAt + entry.ttlMs < this.now()) throw expired();
    const records = entry.sessions.map((id) => this.o.store.getSession(id));
    const ended = Math.max(entry.createdAt, ...records.map((r) => r?.runs.at(-1)?.endedAt ?? 0));
    const base = { taskId, ...this.times(entry.createdAt, ended), ttlMs: entry.ttlMs };
    const live = records.filter((r) => busyRun(r?.runs.at(-1), (owner) => this.o.store.ownerAlive(owner)));
    if (live.length)
      return {
        ...base,
        status: "working",
        statusMessage: `${live.length} of ${records.length} sub-agents still running under another subagents process`,
      };
    const outcomes = entry.sessions.map((id, i) => outcomeOf(id, records[i], false));
    return {
      ...base,
      status: "completed",
      statusMessage: "Ended; read back from the sub-agents' records",
      result: this.o.results[entry.kind](outcomes),
    };
  }
}

export type { Task as McpTask };
