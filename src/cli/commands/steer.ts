// `subagents steer ID "message"|-`: a message to a running sub-agent, through the process that owns it. It is
// delivered at the child's next turn boundary; we wait for the child to confirm it, so exit 0 means the model
// has it, and a child that ends first is reported as not delivered.
import * as fs from "node:fs";
import { steerSession } from "../../control/actions.ts";
import { parse } from "../flags/args.ts";
import { controlContext } from "../control-context.ts";
import { EXIT, UsageError } from "../errors.ts";

export const STEER_HELP = `Usage: subagents steer ID "message"
       subagents steer ID -            (the message from standard input)

Sends a message to a running sub-agent, as if its user typed it while it works. It is delivered at the
child's next turn boundary: after the tool call in progress, before its next model call. The message is
recorded in the session's transcript. Works for foreground runs (another terminal) and background runs.

Waits until the child confirms delivery. Exit codes: 0 delivered; 1 not delivered (the session is not
running, has not started yet, or ended before its next turn — the reason is printed); 2 usage error.`;

export async function cmdSteer(argv: string[]): Promise<number> {
  const { values, positionals } = parse("steer", argv, {});
  if (values.help) {
    console.log(STEER_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 2)
    throw new UsageError(
      `steer: expected ID and "message" (got ${positionals.length} argument${positionals.length === 1 ? "" : "s"}). See 'subagents steer --help'.`,
    );
  const [id, raw] = positionals;
  const text = raw === "-" ? fs.readFileSync(0, "utf8") : raw;
  if (!text.trim()) throw new UsageError("steer: the message is empty.");
  const c = controlContext();
  const r = await steerSession(c.state(id), id, text, () => c.store.getSession(id)?.status ?? "finished");
  if (!r.ok) {
    process.stderr.write(`subagents: steer: not delivered: ${r.reason}.\n`);
    return EXIT.taskFailed;
  }
  process.stderr.write(r.answered ? `answered the question ${id} was waiting on\n` : `delivered to ${id}\n`);
  return EXIT.ok;
}
