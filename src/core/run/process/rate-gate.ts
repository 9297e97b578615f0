// The call-wide half of rate-limit handling. pi retries each failed request itself (and our child extension
// holds those retries until the provider's Retry-After has passed); this gate makes the whole delegate call
// slow down: after a 429 no new child starts until the hold ends, the number of children allowed at once is
// halved (at least 1), and raised again by one per few successful model turns. Every running child is told
// the hold (control pipe), so children that have not hit the limit yet do not hammer the provider either.
import type { Clock } from "../../host.ts";

/** An error text from a provider that means "slow down" (pi's own reading of 429/overloaded, narrowed). */
export const RATE_LIMIT_RE = /\b429\b|rate.?limit|too many requests|overloaded|\b529\b/i;

export type RatePolicy = {
  /** Longest total time one call may spend held by rate limits before its rate-limited tasks give up. */
  maxWaitMs: number;
  /** First back-off when the provider gives no Retry-After; doubles per hold in a row, with jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Successful model turns in a row that raise the allowed concurrency by one. */
  raiseAfter: number;
};

export const DEFAULT_RATE_POLICY: RatePolicy = {
  maxWaitMs: 300_000,
  baseDelayMs: 2_000,
  maxDelayMs: 60_000,
  raiseAfter: 1,
};

/** The gate for a call (or a lone task) whose settings allow `rateLimitWaitSec` of waiting in all. */
export const rateGateFor = (max: number, clock: Clock, rateLimitWaitSec: number) =>
  new RateGate(max, clock, { ...DEFAULT_RATE_POLICY, maxWaitMs: rateLimitWaitSec * 1000 });

export class RateGate {
  /** Children allowed at once right now (≤ max). */
  limit: number;
  /** No model request (and no new child) before this time. */
  until = 0;
  /** Total time this call has been held so far (counted when a hold starts, so a long Retry-After is refused early). */
  heldMs = 0;
  private active = 0;
  private streak = 0;
  private successes = 0;
  private readonly waiters: (() => void)[] = [];
  private readonly listeners = new Set<(until: number) => void>();
  private timer: unknown = null;

  constructor(
    readonly max: number,
    private readonly clock: Clock,
    readonly policy: RatePolicy = DEFAULT_RATE_POLICY,
    private readonly random: () => number = Math.random,
  ) {
    this.limit = max;
  }

  /** Longest total hold before rate-limited tasks give up (settings' rateLimitWait). */
  get maxWaitMs(): number {
    return this.policy.maxWaitMs;
  }

  /** A provider said "slow down". Returns the time requests may resume. */
  limited(retryAfterMs?: number): number {
    const now = this.clock.now();
    this.successes = 0;
    const fresh = now >= this.until;
    // Several children hit the same limit at once: one hold, one halving, not one per child.
    if (fresh) {
      this.streak++;
      this.limit = Math.max(1, Math.ceil(this.limit / 2));
    }
    const backoff = Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** (this.streak - 1));
    // Jitter spreads the children's retries so they do not all hit the provider in the same instant.
    const delay =
      retryAfterMs !== undefined && retryAfterMs >= 0
        ? retryAfterMs + this.random() * 250
        : backoff * (0.75 + this.random() * 0.5);
    const until = Math.max(this.until, now + delay);
    this.heldMs += until - Math.max(now, this.until);
    this.until = until;
    for (const fn of this.listeners) fn(until);
    this.schedule();
    return until;
  }

  /** A model turn went through. */
  succeeded(): void {
    if (this.clock.now() < this.until) return;
    this.streak = 0;
    if (++this.successes < this.policy.raiseAfter || this.limit >= this.max) return;
    this.successes = 0;
    this.limit++;
    this.wake();
  }

  /** The call has been held longer than it may be: rate-limited tasks give up now. */
  get exhausted(): boolean {
    return this.heldMs > this.maxWaitMs;
  }

  /** Ms until the hold ends (0 when not held). */
  remaining(): number {
    return Math.max(0, this.until - this.clock.now());
  }

  /** Tells fn every new hold (the runner forwards it to its child). Returns the unsubscribe. */
  onHold(fn: (until: number) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Waits for a child slot: fewer than `limit` running and no hold. An aborted signal passes at once. */
  acquire(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const tryTake = () => {
        if (signal?.aborted || (this.active < this.limit && this.remaining() === 0)) {
          this.active++;
          resolve();
          return true;
        }
        return false;
      };
      if (tryTake()) return;
      const waiter = () => {
        if (!tryTake()) this.waiters.push(waiter);
      };
      this.waiters.push(waiter);
      signal?.addEventListener("abort", () => this.wake(), { once: true });
      this.schedule();
    });
  }

  release(): void {
    this.active--;
    this.wake();
  }

  /** Resolves when the current hold is over. */
  async cleared(signal?: AbortSignal): Promise<void> {
    while (this.remaining() > 0 && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const t = this.clock.setTimeout(resolve, this.remaining());
        signal?.addEventListener(
          "abort",
          () => {
            this.clock.clearTimeout(t);
            resolve();
          },
          { once: true },
        );
      });
    }
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private schedule(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    const ms = this.remaining();
    if (ms > 0 && this.waiters.length) {
      this.timer = this.clock.setTimeout(() => {
        this.timer = null;
        this.wake();
        this.schedule();
      }, ms);
    }
  }
}
