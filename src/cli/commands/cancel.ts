// `subagents cancel ID…|--all`: stops running or queued sub-agents through the process that owns them, with the
// kill protocol; their runs are recorded as cancelled (SUBAGENT_CANCELLED).
import { cancelSession } from "../../control/actions.ts";
import { request } from "../../control/client.ts";
import { liveOwners, type OwnerRecord } from "../../control/registry.ts";
import { parse } from "../flags/args.ts";
import { CANCEL_FLAGS } from "../flags/command-flags.ts";
import { optionsBlock, parseOptions } from "../flags/flag.ts";
import { controlContext } from "../control-context.ts";
import { EXIT, UsageError } from "../errors.ts";
import { ofSession } from "../../core/run/process/marks.ts";
import { endProcesses } from "../../core/run/process/leftovers.ts";
import { realClock } from "../../core/host.ts";

export const CANCEL_HELP = `Usage: subagents cancel ID [ID …]
       subagents cancel --all

Stops running (or still queued) sub-agents, foreground or background, through the process that owns them:
SIGTERM, then SIGKILL after a grace period, for the child and everything it started. Each run is recorded as
cancelled. --all cancels every session any live owner still has. For a session that is over, it ends the
processes its commands left running on purpose (keepProcesses), with the same protocol.

${optionsBlock(CANCEL_FLAGS)}

Exit codes: 0 every given session was cancelled; 1 some session was not running (reason printed); 2 usage.`;

export async function cmdCancel(argv: string[]): Promise<number> {
  const { values, positionals } = parse("cancel", argv, parseOptions(CANCEL_FLAGS));
  if (values.help) {
    console.log(CANCEL_HELP);
    return EXIT.ok;
  }
  if (values.all === positionals.length > 0)
    throw new UsageError("cancel: give session IDs or --all. See 'subagents cancel --help'.");
  const c = controlContext();
  let failed = false;
  const fail = (msg: string) => {
    failed = true;
    process.stderr.write(`subagents: cancel: ${msg}\n`);
  };
  const owners: OwnerRecord[] = values.all ? liveOwners(c.data).filter((o) => o.sessions.length) : [];
  for (const o of owners) {
    if (!o.socket) {
      fail(`owner ${o.pid} is still starting; try again in a moment.`);
      continue;
    }
    const reply = await request(o.socket, { op: "cancel", all: true }, 5000);
    if (reply.ok) for (const id of reply.cancelled ?? []) console.log(`cancelled ${id}`);
    else fail(reply.reason);
  }
  if (values.all && !owners.length) console.log("Nothing is running.");
  for (const id of positionals) {
    const r = await cancelSession(c.state(id), id, () => c.store.getSession(id)?.status ?? "finished");
    if (r.ok) {
      console.log(`cancelled ${id}`);
      continue;
    }
    // A run that is over may have kept processes (keepProcesses): they carry its session id in their mark.
    const kept = (c.ctx.host.marked?.() ?? []).filter((p) => ofSession(p.mark, id));
    if (!kept.length) {
      fail(`${r.reason}.`);
      continue;
    }
    await endProcesses(c.ctx.host, realClock, kept);
    console.log(
      `ended ${kept.length} process${kept.length === 1 ? "" : "es"} kept by ${id}: ${kept.map((p) => p.pid).join(", ")}`,
    );
  }
  return failed ? EXIT.taskFailed : EXIT.ok;
}
