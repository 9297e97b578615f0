// The caps of one pi session (or one CLI invocation / background supervisor) while it runs: admits a call only
// when its tasks fit under maxSpawnsPerSession and the spend so far under maxSessionCost, and stops queued tasks
// from starting once maxSessionCost is reached (running ones finish). Also what a status line shows: how many
// children run, how many wait, and the dollars spent so far.
import type { CapSettings } from "../cap-settings.ts";
import { callRefusal, startRefusal, type CapRefusal, type CapsUsed } from "../session-caps.ts";
import type { ResolvedTask, TaskOutcome, TaskWiring } from "./task-types.ts";

type Run = (input: ResolvedTask, hooks: TaskWiring) => Promise<TaskOutcome>;

export type GuardStatus = { running: number; queued: number; cost: number };

export class CapGuard {
  /** Admitted tasks whose run is not recorded yet (queued, or starting). */
  private pending = 0;
  private queued = 0;
  /** Live cost of each running task, by session id (the store has a run's cost only once it ends). */
  private readonly live = new Map<string, number>();
  /** Without a store that counts for us (CLI, supervisor): children started and dollars of ended ones. */
  private started = 0;
  private endedCost = 0;

  /**
   * `recorded`: what the store knows of this pi session (runs started, running ones included, and the cost of
   * ended ones) — read on every check, so a /reload or a resumed pi session keeps its counts. Unset: this
   * process is the whole scope (a CLI invocation, a supervisor) and the guard counts by itself.
   */
  constructor(
    private readonly recorded?: () => CapsUsed,
    readonly scope = "this pi session",
    private readonly onChange?: () => void,
  ) {}

  used(): CapsUsed {
    let live = 0;
    for (const c of this.live.values()) live += c;
    if (!this.recorded) return { spawns: this.started + this.pending, cost: this.endedCost + live };
    const r = this.recorded();
    return { spawns: r.spawns + this.pending, cost: r.cost + live };
  }

  status(): GuardStatus {
    return { running: this.live.size, queued: this.queued, cost: this.used().cost };
  }

  check(caps: CapSettings, call: { tasks: number; maxCost?: number }): CapRefusal | null {
    return callRefusal(caps, this.used(), call, this.scope);
  }

  /** Refuses a call that would pass the caps; else counts its tasks as coming (call runner() to run them). */
  admit(caps: CapSettings, call: { tasks: number; maxCost?: number }): CapRefusal | null {
    const refusal = callRefusal(caps, this.used(), call, this.scope);
    if (refusal) return refusal;
    this.pending += call.tasks;
    this.queued += call.tasks;
    this.onChange?.();
    return null;
  }

  /** Undoes an admission whose call did not start after all (its tasks could not be recorded). */
  withdraw(call: { tasks: number }): void {
    this.pending -= call.tasks;
    this.queued -= call.tasks;
    this.onChange?.();
  }

  /** Runs each admitted task through `run`, refusing to start it once the cost cap is reached. */
  runner(caps: CapSettings, run: Run): Run {
    return async (input, hooks) => {
      const key = input.sessionId;
      let counted = false;
      const count = () => {
        if (counted) return;
        counted = true;
        this.pending--;
      };
      this.queued--;
      this.live.set(key, 0);
      this.onChange?.();
      try {
        return await run(input, {
          ...hooks,
          startRefusal: () => {
            const refusal = startRefusal(caps, this.used(), this.scope);
            // The run is in the store from here on (recorded as started, or as refused).
            count();
            if (!refusal && !this.recorded) this.started++;
            return refusal;
          },
          onEvent: (state, ev) => {
            if (this.live.get(key) !== state.usage.cost) {
              this.live.set(key, state.usage.cost);
              this.onChange?.();
            }
            hooks.onEvent?.(state, ev);
          },
        });
      } finally {
        count();
        if (!this.recorded) this.endedCost += this.live.get(key) ?? 0;
        this.live.delete(key);
        this.onChange?.();
      }
    };
  }
}
