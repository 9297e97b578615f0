// Rate-limits a callback: at most one call per interval, the latest value always delivered (trailing call),
// and flush() sends whatever is pending at once (the final update). pi re-renders the tool row synchronously
// on every onUpdate, so an unthrottled 5,000-delta child would cost 5,000 renders. Even the first value waits for
// the end of the current turn of the event loop: a burst (sixteen tasks starting at once) is one update, not one
// that says "1 running, 15 queued" for as long as starting the other fifteen keeps the loop busy.
import type { Clock } from "../core/host.ts";

/** 110 ms, not 100: at most 10 updates in ANY one-second window, not just on average. */
export const UPDATE_INTERVAL_MS = 110;

export class Throttle<T> {
  private last = -Infinity;
  private pending: { value: T } | null = null;
  private timer: unknown = null;
  calls = 0;

  constructor(
    private readonly send: (value: T) => void,
    private readonly intervalMs: number,
    private readonly clock: Clock,
  ) {}

  push(value: T): void {
    const now = this.clock.now();
    this.pending = { value };
    if (this.timer === null) {
      this.timer = this.clock.setTimeout(
        () => {
          this.timer = null;
          const p = this.pending;
          this.pending = null;
          if (p) this.deliver(p.value, this.clock.now());
        },
        Math.max(0, this.intervalMs - (now - this.last)),
      );
    }
  }

  flush(value?: T): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    const p = value === undefined ? this.pending : { value };
    this.pending = null;
    if (p) this.deliver(p.value, this.clock.now());
  }

  cancel(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.pending = null;
  }

  private deliver(value: T, now: number): void {
    this.last = now;
    this.calls++;
    this.send(value);
  }
}
