// `subagents wait ID… [--timeout S] [--json]`: blocks until each session's current run ends, then prints the
// outputs the way `delegate` does. It follows the store and the owner registry, so it works for foreground
// runs in another terminal, background runs, finished sessions, and runs whose owner died (recorded as
// interrupted) — it never waits on a process that is gone.
import { WAIT_FLAGS } from "../flags/command-flags.ts";
import { outcomeOf } from "../../ui/recorded.ts";
import { parse, positiveNumber } from "../flags/args.ts";
import { optionsBlock, parseOptions } from "../flags/flag.ts";
import { printEnded } from "../terminal/ended-output.ts";
import { controlContext } from "../control-context.ts";
import { EXIT, UsageError } from "../errors.ts";
import { summaryEvent, writeJson } from "../terminal/report.ts";

export const WAIT_HELP = `Usage: subagents wait ID [ID …] [--timeout S] [--json]

Waits until every given session's current run has ended — background or foreground (from another
terminal), or already finished — and prints the outputs like 'delegate': each task's status line and
output; with --json a last "summary" line. A run whose owner died is reported as interrupted.

${optionsBlock(WAIT_FLAGS)}

Exit codes: 0 all completed; 1 any failed, was cancelled or interrupted; 2 usage or unknown session; 124 timeout.`;

const POLL_MS = 200;
export const EXIT_WAIT_TIMEOUT = 124;

export async function cmdWait(argv: string[]): Promise<number> {
  const { values, positionals } = parse("wait", argv, parseOptions(WAIT_FLAGS));
  if (values.help) {
    console.log(WAIT_HELP);
    return EXIT.ok;
  }
  if (!positionals.length) throw new UsageError("wait: expected one or more session IDs. See 'subagents wait --help'.");
  const timeout = positiveNumber("wait", "timeout", values.timeout);
  const c = controlContext();
  const ids = [...new Set(positionals)];
  for (const id of ids) if (c.state(id).kind === "unknown") throw new UsageError(`wait: no session "${id}".`);
  const deadline = timeout === undefined ? Infinity : Date.now() + timeout * 1000;
  let pending = ids;
  for (;;) {
    // Only a live owner keeps a session pending: one that vanished with its owner before it started is over too.
    pending = pending.filter((id) => c.state(id).kind === "active");
    if (!pending.length || Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))));
  }
  const outcomes = ids.map((id) => outcomeOf(id, c.store.getSession(id), pending.includes(id)));
  if (values.json) writeJson(summaryEvent(outcomes));
  else printEnded(outcomes.filter((o) => !pending.includes(o.sessionId)));
  if (pending.length) {
    process.stderr.write(`subagents: wait: timed out after ${timeout}s; still running: ${pending.join(" ")}\n`);
    return EXIT_WAIT_TIMEOUT;
  }
  return outcomes.some((o) => o.result.status !== "completed") ? EXIT.taskFailed : EXIT.ok;
}
