// The calls this server runs, across the rounds of their tool call. A child's question ends a round: the handler
// returns an `input_required` result carrying it as an elicitation (the 2026-07-28 revision's multi-round-trip;
// protocol/session.ts pushes it as `elicitation/create` on older connections), and the client's retry — with the
// answers and the call's signed `requestState` — comes back to the same running call. Children keep running
// between rounds. A call whose client does not come back within askTimeout is stopped; a cancelled request, or
// a client that goes away, stops its call's children with the kill protocol.
// Every `requestState` names its call: a retry the client sends again (or one that arrives after the call ended) is
// answered by that call — attended while it runs, from its tasks' records once it ended — and never starts another.
import { randomBytes } from "node:crypto";
import type { AskAnswer, Asker, AskRequest } from "../core/run/process/ask.ts";
import type { TaskOutcome } from "../core/run/task-types.ts";
import type { CallRun } from "./call-adapter.ts";
import { reportProgress } from "./progress.ts";
import { answerOf, elicitation } from "./questions.ts";
import { RequestStateCodec } from "./protocol/request-state.ts";
import type { ToolContext, ToolOutcome } from "./protocol/session.ts";
import { inputRequired, type ToolResult } from "./protocol/wire.ts";

type Open = { q: AskRequest; resolve: (a: AskAnswer) => void; sent: boolean };

export type LiveCall = {
  id: string;
  run?: CallRun;
  /** The result once every task ended. */
  finish: (outcomes: TaskOutcome[]) => ToolResult;
  questions: Map<string, Open>;
  /** Who waits for the call to change: the requests attending it (a retry sent twice attends it twice). */
  waiters: Set<() => void>;
  /** A question the client was asked is no longer open (answered elsewhere, timed out, its run ended). */
  withdrawn: () => void;
  progress: { n: number };
  /** How long the call waits for its client between rounds (its askTimeout), before graceMs. */
  parkMs: number;
  /** While the client answers a round: stops the call when it never comes back, or cancels the request. */
  parked?: () => void;
};

/** What the server keeps of a call that ended (or left the request: background, a task), for a retry that comes
 *  after: which sessions it was, and how it was answered. */
export type EndedCall = { sessions: string[]; background?: boolean; task?: string };

/** The `requestState` of a round: the call it belongs to, and whether the client was asked for its roots. */
export type RoundState = { call?: string; roots?: boolean };

/** How long a parked call waits for its client beyond askTimeout (the question's own timeout goes first). */
const PARK_GRACE_MS = 30_000;
/** How many ended calls are remembered for late retries (a state outlives them by no more than its day). */
const ENDED_KEPT = 512;
const STATE_TTL_MS = 86_400_000;

export class McpCalls {
  private readonly live = new Map<string, LiveCall>();
  private readonly ended = new Map<string, EndedCall>();
  /** Background calls, tasks and calls between rounds alike: what shutdown stops. */
  private readonly running = new Set<CallRun>();
  readonly codec = new RequestStateCodec<RoundState>(STATE_TTL_MS);

  /** `graceMs`: how long a parked call waits for its client beyond its own askTimeout. */
  constructor(private readonly graceMs = PARK_GRACE_MS) {}

  /** A new call id (a round before the call starts — the client's roots — already names it). */
  newId(): string {
    return randomBytes(12).toString("hex");
  }

  /** The round state a retry carries (verified by the session), or an empty one. */
  stateOf(ctx: ToolContext): RoundState {
    const s = ctx.requestState as RoundState | undefined;
    return s && typeof s === "object" ? s : {};
  }

  /** A new call; `asker` (given to the run) sends its children's questions to the client. `parkMs`: the call's
   *  askTimeout (its engine's settings: the folder its tasks run in), how long it waits for its client. */
  open(finish: LiveCall["finish"], parkMs: number, id = this.newId()): { call: LiveCall; asker: Asker } {
    const call: LiveCall = {
      id,
      finish,
      parkMs,
      questions: new Map(),
      waiters: new Set(),
      withdrawn: () => {},
      progress: { n: 0 },
    };
    this.live.set(call.id, call);
    const asker: Asker = (q) =>
      new Promise((resolve) => {
        call.questions.set(q.id, { q, resolve, sent: false });
        // Answered elsewhere (`subagents answer`, a steer), timed out or the run ended: no longer the client's.
        q.signal.addEventListener(
          "abort",
          () => {
            if (call.questions.get(q.id)?.sent) call.withdrawn();
            call.questions.delete(q.id);
          },
          { once: true },
        );
        wake(call);
      });
    return { call, asker };
  }

  /** Tracks a run until it ends and its tasks' hooks have (background runs and tasks too), for shutdown; `ended`
   *  remembers which sessions its call was, for a retry that comes after. */
  track(run: CallRun, answered?: { id: string } & Omit<EndedCall, "sessions">): void {
    this.running.add(run);
    void run.settled.finally(() => this.running.delete(run));
    if (answered) {
      const { id, ...how } = answered;
      this.remember(id, { sessions: run.tasks.map((t) => t.sessionId), ...how });
    }
  }

  /** The running call a retry continues. */
  resumed(state: RoundState): LiveCall | undefined {
    return state.call ? this.live.get(state.call) : undefined;
  }

  /** A call of this server that ended (or started in the background): a retry is answered from its records. */
  endedCall(state: RoundState): EndedCall | undefined {
    return state.call ? this.ended.get(state.call) : undefined;
  }

  private remember(id: string, call: EndedCall): void {
    this.ended.set(id, call);
    if (this.ended.size > ENDED_KEPT) this.ended.delete(this.ended.keys().next().value as string);
  }

  forget(call: LiveCall): void {
    call.parked?.();
    this.live.delete(call.id);
    if (call.run) this.remember(call.id, { sessions: call.run.tasks.map((t) => t.sessionId) });
  }

  /** Serves one round of a call: delivers this round's answers, reports progress, and returns the result, the next
   * questions, or (the request cancelled) nothing worth sending once the children are stopped. */
  async attend(call: LiveCall, ctx: ToolContext): Promise<ToolOutcome> {
    const run = call.run!;
    call.parked?.();
    call.parked = undefined;
    const responses = ctx.inputResponses;
    for (const [key, open] of call.questions) {
      if (!open.sent) continue;
      // A question sent last round and left out of the answers was dismissed.
      call.questions.delete(key);
      open.resolve(key in responses ? answerOf(responses[key]) : { none: "dismissed" });
    }
    const stop = reportProgress(ctx, run, call.progress);
    const signal = ctx.signal;
    let ended: TaskOutcome[] | undefined;
    let waiter = () => {};
    try {
      void run.outcomes.then((o) => {
        ended = o;
        wake(call);
      });
      while (!ended && !signal.aborted && ![...call.questions.values()].some((o) => !o.sent) && this.live.has(call.id))
        await new Promise<void>((resolve) => {
          waiter = () => {
            call.waiters.delete(waiter);
            signal.removeEventListener("abort", waiter);
            resolve();
          };
          call.waiters.add(waiter);
          signal.addEventListener("abort", waiter, { once: true });
        });
    } finally {
      stop();
      call.waiters.delete(waiter);
    }
    if (ended) {
      this.forget(call);
      wake(call);
      return call.finish(ended);
    }
    if (signal.aborted) {
      run.abort(signal.reason);
      this.forget(call);
      await run.outcomes;
      const cancelled: ToolResult = { content: [{ type: "text", text: "Cancelled" }], isError: true };
      return cancelled;
    }
    // The call ended under another request attending it (a retry sent twice): its answer is this one's too.
    if (!this.live.has(call.id)) return call.finish(await run.outcomes);
    const asked = [...call.questions.entries()].filter(([, o]) => !o.sent);
    for (const [, o] of asked) o.sent = true;
    this.park(call, signal);
    // On a 2025 connection the questions are pushed while the call runs on: the round ends early when one of them
    // is answered elsewhere or times out, or when the call ends.
    const until = new Promise<void>((resolve) => {
      call.withdrawn = resolve;
      void run.outcomes.finally(resolve);
    });
    const requests = Object.fromEntries(
      asked.map(([key, o]) => [key, { ...elicitation(o.q), timeoutMs: call.parkMs }]),
    );
    return { ...inputRequired(requests, this.codec.mint({ call: call.id })), until };
  }

  /** Between rounds: the client answers and retries, or the call is stopped — when the request is cancelled (a 2025
   * client's question round happens within its request: protocol/session.ts) or after askTimeout. */
  private park(call: LiveCall, signal: AbortSignal): void {
    const run = call.run!;
    const stop = (reason: unknown) => {
      this.forget(call);
      run.abort(reason);
    };
    const cancelled = () => stop(signal.reason);
    const timer = setTimeout(
      () => stop(new Error("the MCP client did not come back for the call")),
      call.parkMs + this.graceMs,
    );
    signal.addEventListener("abort", cancelled, { once: true });
    call.parked = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", cancelled);
    };
  }

  /** Stops every call's children (the server is going away) and waits for their ends, at most `ms`. */
  async stopAll(reason: unknown, ms: number): Promise<void> {
    for (const call of this.live.values()) call.parked?.();
    const runs = [...this.running];
    for (const run of runs) run.abort(reason);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled(runs.map((r) => r.settled)),
      new Promise((r) => {
        timer = setTimeout(r, ms);
      }),
    ]);
    clearTimeout(timer);
  }
}

function wake(call: LiveCall): void {
  for (const w of [...call.waiters]) w();
}
