// The in-memory store: used where no SQLite exists (Node < 22.5 running pi). Same contract as the SQLite
// store; the parent pi session's appendEntry mirror is what makes its sessions survive a restart.
import {
  busyRun,
  capMessage,
  INTERRUPTED_MESSAGE,
  NEVER_STARTED_MESSAGE,
  newSessionId,
  ownerOf,
  resumeRunningMessage,
  startedChild,
} from "./store-types.ts";
import type {
  ImportedRun,
  NewRun,
  NewSession,
  OwnerAlive,
  RunOwner,
  QueuedRun,
  RunRecord,
  RunStatus,
  SessionRecord,
  SessionStore,
  SessionSummary,
} from "./store-types.ts";
import { emptyUsage, type ErrorCode, type RunResult, type StoredMessage } from "../types.ts";
import type { IsolationResult } from "../isolation-types.ts";

export class MemoryStore implements SessionStore {
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly runs = new Map<number, { sessionId: string; run: RunRecord; messages: StoredMessage[] }>();
  /** Children by parent pi session: the caps count them on every spawn, without walking every session. */
  private readonly byParent = new Map<string, Set<string>>();
  private nextRun = 1;

  constructor(private readonly opts: { isAlive: OwnerAlive }) {}

  newSessionId(): string {
    return newSessionId();
  }

  createSession(s: NewSession, status: RunStatus = "running"): void {
    const now = Date.now();
    this.sessions.set(s.id, {
      id: s.id,
      name: s.name,
      agent: s.agent,
      cwd: s.cwd,
      status,
      sessionFile: s.sessionFile,
      parentSession: s.parentSession,
      ...(s.schedule ? { schedule: s.schedule } : {}),
      createdAt: now,
      updatedAt: now,
      runs: [],
    });
    if (s.parentSession)
      this.byParent.set(s.parentSession, (this.byParent.get(s.parentSession) ?? new Set()).add(s.id));
  }

  queueRun(session: NewSession, run: QueuedRun): number {
    if (!this.sessions.has(session.id)) this.createSession(session, "queued");
    return this.addRun(session.id, { ...run, status: "queued" });
  }

  startQueued(runId: number, run: NewRun): void {
    const entry = this.runs.get(runId);
    if (entry?.run.status !== "queued") throw new Error(`run ${runId} is not waiting to start`);
    const s = this.sessions.get(entry.sessionId)!;
    const own = entry.run;
    if (s.runs.some((r) => r !== own && busyRun(r, this.opts.isAlive))) throw new Error(resumeRunningMessage(s.id));
    Object.assign(own, {
      status: "running",
      prompt: run.prompt,
      startedAt: Date.now(),
      ownerStart: run.ownerStart ?? null,
      pi: run.pi,
    });
    if (run.sandbox !== undefined) own.sandbox = run.sandbox;
    if (run.runner) own.runner = run.runner;
    this.follow(s, "running", run.name);
  }

  startRun(sessionId: string, run: NewRun): number {
    const s = this.sessions.get(sessionId);
    if (!s) throw new Error(`Session "${sessionId}" not found`);
    if (s.runs.some((r) => busyRun(r, this.opts.isAlive))) throw new Error(resumeRunningMessage(sessionId));
    return this.addRun(sessionId, { ...run, status: "running" });
  }

  private follow(s: SessionRecord, status: RunStatus, name?: string): void {
    if (name) s.name = name;
    s.status = status;
    s.updatedAt = Date.now();
  }

  private addRun(sessionId: string, run: NewRun & { status: RunStatus }): number {
    const s = this.sessions.get(sessionId)!;
    const id = this.push(s, {
      prompt: run.prompt,
      status: run.status,
      ownerPid: run.ownerPid,
      ownerStart: run.ownerStart ?? null,
      pi: run.pi,
    });
    const record = s.runs.at(-1)!;
    if (run.sandbox !== undefined) record.sandbox = run.sandbox;
    if (run.runner) record.runner = run.runner;
    this.follow(s, run.status, run.name);
    return id;
  }

  /** A run at the end of its session: the given fields over one that has not done anything yet. */
  private push(
    s: SessionRecord,
    fields: Partial<RunRecord> & Pick<RunRecord, "prompt" | "status" | "ownerPid" | "ownerStart">,
    messages: StoredMessage[] = [],
  ): number {
    const id = this.nextRun++;
    const record: RunRecord = {
      id,
      seq: s.runs.length + 1,
      exitCode: null,
      usage: emptyUsage(),
      output: "",
      toolCount: 0,
      startedAt: Date.now(),
      messageCount: messages.length,
      ...fields,
    };
    s.runs.push(record);
    this.runs.set(id, { sessionId: s.id, run: record, messages });
    return id;
  }

  finishQueued(runId: number, r: RunResult): void {
    if (this.runs.get(runId)?.run.status === "queued") this.finishRun(runId, r);
  }

  checkpointRun(runId: number, messages: StoredMessage[], from: number): void {
    const entry = this.runs.get(runId);
    if (entry?.run.status !== "running") return;
    entry.messages.splice(from, entry.messages.length - from, ...messages.map(capMessage));
    entry.run.messageCount = entry.messages.length;
  }

  setRunIsolation(runId: number, isolation: IsolationResult): void {
    const entry = this.runs.get(runId);
    if (entry) entry.run.isolation = isolation;
  }

  addRunWarnings(runId: number, warnings: string[]): void {
    const entry = this.runs.get(runId);
    if (entry && warnings.length) entry.run.warnings = [...(entry.run.warnings ?? []), ...warnings];
  }

  finishRun(runId: number, r: RunResult): void {
    const entry = this.runs.get(runId);
    if (!entry) return;
    // Warnings a task hook recorded while the run went on stay, after the run's own.
    const earlier = (entry.run.warnings ?? []).filter((w) => !r.warnings?.includes(w));
    r = { ...r, warnings: [...(r.warnings ?? []), ...earlier] };
    Object.assign(entry.run, {
      status: r.status,
      exitCode: r.exitCode,
      model: r.model,
      usage: { ...r.usage },
      error: r.error,
      errorCode: r.errorCode,
      output: r.output,
      finalize: r.finalize,
      finalized: r.finalized,
      toolCount: r.toolCount,
      endedAt: Date.now(),
      messageCount: r.messages.length,
      ...(r.warnings?.length ? { warnings: [...r.warnings] } : {}),
      ...(r.isolation ? { isolation: r.isolation } : {}),
    });
    entry.messages = r.messages.map(capMessage);
    const s = this.sessions.get(entry.sessionId);
    if (s) {
      s.status = r.status;
      s.updatedAt = Date.now();
    }
  }

  setSessionFile(sessionId: string, file: string): void {
    const s = this.sessions.get(sessionId);
    if (s) s.sessionFile = file;
  }

  getSession(id: string): SessionRecord | null {
    const s = this.sessions.get(id);
    return s ? { ...s, runs: s.runs.map((r) => ({ ...r })) } : null;
  }

  getMessages(runId: number): StoredMessage[] {
    return this.runs.get(runId)?.messages.slice() ?? [];
  }

  listSessions(opts: { limit: number; offset?: number }): SessionSummary[] {
    const all = [...this.sessions.values()].sort((a, b) => b.updatedAt - a.updatedAt);
    return all.slice(opts.offset ?? 0, (opts.offset ?? 0) + opts.limit).map((s) => ({
      id: s.id,
      name: s.name,
      agent: s.agent,
      cwd: s.cwd,
      status: s.status,
      cost: s.runs.reduce((n, r) => n + r.usage.cost, 0),
      tokens: {
        input: s.runs.reduce((n, r) => n + r.usage.input, 0),
        output: s.runs.reduce((n, r) => n + r.usage.output, 0),
        cacheRead: s.runs.reduce((n, r) => n + r.usage.cacheRead, 0),
        cacheWrite: s.runs.reduce((n, r) => n + r.usage.cacheWrite, 0),
      },
      durationMs: s.runs.reduce((n, r) => n + (r.endedAt === undefined ? 0 : r.endedAt - r.startedAt), 0),
      runCount: s.runs.length,
      ...(s.schedule ? { schedule: s.schedule } : {}),
      ...(s.runs.at(-1)?.errorCode ? { lastErrorCode: s.runs.at(-1)!.errorCode } : {}),
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
    }));
  }

  hasSessionsIn(folder: string): boolean {
    const top = folder.replace(/\/+$/, "") || "/";
    return [...this.sessions.values()].some((s) => s.cwd === top || s.cwd.startsWith(top === "/" ? "/" : `${top}/`));
  }

  parentUsage(parentSession: string): { spawns: number; cost: number } {
    const ids = [...(this.byParent.get(parentSession) ?? [])];
    const runs = ids.flatMap((id) => this.sessions.get(id)?.runs ?? []);
    return { spawns: runs.filter(startedChild).length, cost: runs.reduce((n, r) => n + r.usage.cost, 0) };
  }

  ownerAlive(owner: RunOwner): boolean {
    return this.opts.isAlive(owner);
  }

  recoverStale(): number {
    const isAlive = this.opts.isAlive;
    let n = 0;
    for (const s of this.sessions.values()) {
      for (const r of s.runs) {
        const owner = ownerOf(r);
        if (!busyRun(r, () => true) || (owner !== null && isAlive(owner))) continue;
        Object.assign(r, {
          status: "error",
          // A queued task never started and nobody will start it: said as such, not as an interrupted run.
          error: r.status === "queued" ? NEVER_STARTED_MESSAGE : INTERRUPTED_MESSAGE,
          errorCode: "SUBAGENT_FAILED",
          endedAt: Date.now(),
        });
        s.status = "error";
        n++;
      }
    }
    return n;
  }

  importRuns(runs: ImportedRun[]): void {
    if (!runs.length || this.sessions.has(runs[0].sessionId)) return;
    const first = runs[0];
    this.createSession({
      id: first.sessionId,
      name: first.name,
      agent: first.agent,
      cwd: first.cwd,
      sessionFile: first.sessionFile,
    });
    const s = this.sessions.get(first.sessionId)!;
    for (const r of runs)
      this.push(
        s,
        {
          prompt: r.prompt,
          status: r.status,
          exitCode: r.exitCode ?? null,
          model: r.model,
          usage: r.usage ?? emptyUsage(),
          error: r.error,
          errorCode: r.errorCode as ErrorCode | undefined,
          finalized: r.finalized,
          output: r.output ?? "",
          startedAt: r.at,
          endedAt: r.at,
          ownerPid: null,
          ownerStart: null,
        },
        (r.messages ?? []).map(capMessage),
      );
    s.status = runs[runs.length - 1].status;
    s.createdAt = first.at;
    s.updatedAt = runs[runs.length - 1].at;
  }
}
