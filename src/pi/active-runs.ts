// What this extension is running right now: one controller per tool call (so session_shutdown can stop
// everything) and one per task (so `/subagents kill ID` can stop a single sub-agent).

export class ActiveRuns {
  private readonly calls = new Set<AbortController>();
  private readonly tasks = new Map<string, AbortController>();
  /** Background batches still running: shutdown waits (bounded) for them to be stopped and recorded. */
  private readonly batches = new Set<Promise<unknown>>();
  /** When each task was stopped by an abort (its call's, or a kill): pi aborts a call in the foreground before it
   *  tells us it ends, so those tasks are gone from `running` by then. */
  private readonly stops: number[] = [];

  /** A controller that follows `signal` (passing `reason` on, when given, instead of the signal's own) and that
   *  abortAll() can trigger; release it when the call ends. */
  link(signal: AbortSignal | undefined, reason?: unknown): AbortController {
    const c = follow(signal, reason);
    this.calls.add(c);
    return c;
  }

  release(c: AbortController): void {
    this.calls.delete(c);
  }

  /** A signal for one task: aborted by its call's signal or by kill(sessionId). */
  task(sessionId: string, signal: AbortSignal | undefined): { signal: AbortSignal; done(): void } {
    const c = follow(signal);
    this.tasks.set(sessionId, c);
    c.signal.addEventListener("abort", () => this.stops.push(Date.now()), { once: true });
    return { signal: c.signal, done: () => this.tasks.get(sessionId) === c && this.tasks.delete(sessionId) };
  }

  running(): string[] {
    return [...this.tasks.keys()];
  }

  /** How many tasks an abort stopped in the last `ms` (pi quitting aborts its foreground call first). */
  stoppedWithin(ms: number, now = Date.now()): number {
    return this.stops.filter((t) => now - t <= ms).length;
  }

  kill(sessionId: string, reason?: unknown): boolean {
    const c = this.tasks.get(sessionId);
    if (!c) return false;
    c.abort(reason);
    this.tasks.delete(sessionId);
    return true;
  }

  /** A background batch, for settle(). */
  track(batch: Promise<unknown>): void {
    this.batches.add(batch);
    void batch.finally(() => this.batches.delete(batch));
  }

  /** Resolves when every tracked background batch has ended, or after `ms`. */
  async settle(ms: number): Promise<void> {
    if (!this.batches.size) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.allSettled([...this.batches]), new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  /** `reason` goes to every task's signal: it decides how they are recorded (core/run/process/abort-reason.ts). */
  abortAll(reason?: unknown): number {
    const n = this.tasks.size;
    for (const c of this.calls) c.abort(reason);
    for (const c of this.tasks.values()) c.abort(reason);
    this.calls.clear();
    this.tasks.clear();
    return n;
  }
}

function follow(signal: AbortSignal | undefined, reason?: unknown): AbortController {
  const c = new AbortController();
  if (signal?.aborted) c.abort(reason ?? signal.reason);
  else signal?.addEventListener("abort", () => c.abort(reason ?? signal.reason), { once: true });
  return c;
}
