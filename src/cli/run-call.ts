// A prepared call run by this CLI process in the foreground (`delegate`, `flow`, `run`): the call runner with this
// process as the tasks' owner (so `steer`, `cancel`, `wait`, `attach` reach them from another terminal) and the
// signal traps (Ctrl-C stops every child; a second one kills them). The command renders what the runner reports.
import type { PreparedCall } from "../core/call/prepare.ts";
import { runCall, type CallEvent } from "../core/call/runner.ts";
import type { CapGuard } from "../core/run/cap-guard.ts";
import type { Engine } from "../core/run/engine.ts";
import type { Asker } from "../core/run/process/ask.ts";
import type { TaskOutcome } from "../core/run/task-types.ts";
import { startOwner } from "../control/owner.ts";
import { dataDir, type CliContext } from "./engine.ts";
import { refusalError } from "./flags/call-flags.ts";
import { trapSignals, type SignalHooks } from "./terminal/signals.ts";
import { closedOutputLine, onOutputClosed, outputClosed } from "./terminal/closed-output.ts";

export type ForegroundCall = {
  command: string;
  /** The caps of this invocation (the ones the call was prepared under). */
  caps: CapGuard;
  /** Who answers the children's questions: the person at this terminal, when there is one. */
  ask?: Asker;
  onEvent: (e: CallEvent) => void;
} & Pick<SignalHooks, "onStop" | "onForce">;

/** The call's outcomes (its tasks' hooks ended too), and the exit code of a stop by signal (null: none). */
export async function runForeground(
  ctx: CliContext,
  engine: Engine,
  call: PreparedCall,
  o: ForegroundCall,
): Promise<{ outcomes: TaskOutcome[]; interrupted: number | null }> {
  const owner = await startOwner(dataDir(ctx), "cli", []);
  const interrupt = trapSignals({ onStop: o.onStop, onForce: o.onForce });
  // A closed stdout or stderr ends nobody's work (closed-output.ts): the tasks go on; the other stream says so.
  let ended = 0;
  const stopWatching = onOutputClosed((which) => {
    const other = which === "stdout" ? "stderr" : "stdout";
    // stdout may carry --json lines a program reads: the line goes to stderr only.
    if (other === "stderr" && !outputClosed("stderr"))
      process.stderr.write(`\n${closedOutputLine(which, call.tasks.length - ended)}\n`);
  });
  try {
    const ran = await runCall(engine, call, {
      caps: o.caps,
      owner,
      signal: interrupt.signal,
      ask: o.ask,
      onEvent: (e) => {
        if (e.type === "taskEnd") ended++;
        o.onEvent(e);
      },
    });
    if ("refusal" in ran) throw refusalError(o.command, ran.refusal);
    return { outcomes: ran.outcomes, interrupted: interrupt.exitCode() };
  } finally {
    stopWatching();
    interrupt.dispose();
    owner.close();
  }
}
