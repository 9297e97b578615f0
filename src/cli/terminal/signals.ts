// SIGINT/SIGTERM/SIGHUP (a terminal that hung up: nobody can answer or stop the run there any more, so it is
// stopped in order as for Ctrl-C, rather than dying at once and leaving its children to notice). The first one aborts every running child (the kill protocol runs in the engine: SIGTERM, pi
// stops its bash process groups, SIGKILL after a grace period) and lets the command record the statuses and
// restore the terminal before it exits 129/130/143. A second one means "now": every process tree we started is
// SIGKILLed synchronously — including the ones that were already orphaned by the first stop — then the command
// draws its final frame and the process exits at once.
import { descendantsOf } from "../../host/proc-tree.ts";
import { markedProcesses } from "../../host/proc-marks.ts";
import { liveMarks, within } from "../../core/run/process/marks.ts";
import { EXIT } from "../errors.ts";
import { holdOutput } from "./closed-output.ts";
import { cancelledBy } from "../../core/run/process/abort-reason.ts";

/** How a task stopped by a hung-up terminal is recorded. */
export const HUNG_UP = "Cancelled: the terminal hung up (SIGHUP)";

export const STOPPING = "stopping… press Ctrl-C again to force";
export const FORCED = "stopped: every sub-agent process was killed";

export type Interrupt = { signal: AbortSignal; exitCode(): number | null; dispose(): void };

export type SignalHooks = {
  /** First signal: say that we are stopping (e.g. "stopping… press Ctrl-C again to force"). */
  onStop?: () => void;
  /** Second signal, after every known process was killed: draw the final frame, restore the terminal. */
  onForce?: () => void;
  /** What the first signal aborts with: the reason decides how the tasks' ends are recorded (abort-reason.ts). */
  reason?: unknown;
};

/** SIGKILLs every pid given; the ones already gone are skipped. Returns how many were signalled. */
export function killAll(pids: Iterable<number>): number {
  let n = 0;
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
      n++;
    } catch {
      // Already gone.
    }
  }
  return n;
}

export function trapSignals(hooks: SignalHooks = {}): Interrupt {
  const controller = new AbortController();
  // Whoever traps signals runs work: a reader that goes away does not end it (closed-output.ts).
  const release = holdOutput();
  let code: number | null = null;
  // Taken at the first signal, before anything is stopped: a grandchild orphaned by its parent's exit can no
  // longer be found by walking down from us, so it is remembered here.
  let known = new Set<number>();
  const handler = (sig: NodeJS.Signals) => {
    if (code !== null) {
      // With what our runs' commands left outside the tree (marks.ts): the runner would have ended it next.
      const marked = liveMarks.size ? markedProcesses((mark) => [...liveMarks].some((m) => within(mark, m))) : [];
      killAll(new Set([...known, ...descendantsOf(process.pid), ...marked.map((p) => p.pid)]));
      try {
        hooks.onForce?.();
      } finally {
        process.exit(code);
      }
    }
    code = sig === "SIGINT" ? EXIT.sigint : sig === "SIGHUP" ? EXIT.sighup : EXIT.sigterm;
    known = new Set(descendantsOf(process.pid));
    hooks.onStop?.();
    controller.abort(hooks.reason ?? (sig === "SIGHUP" ? cancelledBy(HUNG_UP) : undefined));
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  process.on("SIGHUP", handler);
  return {
    signal: controller.signal,
    exitCode: () => code,
    dispose: () => {
      release();
      process.off("SIGINT", handler);
      process.off("SIGTERM", handler);
      process.off("SIGHUP", handler);
    },
  };
}
