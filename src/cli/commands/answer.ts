// `subagents answer ID "text"|-`: answers the open question of a running sub-agent (docs/limits.md "Children that ask"), through the
// process that owns it. The child waits for it up to subagents.askTimeout; `subagents steer` answers it too.
import * as fs from "node:fs";
import { steerSession } from "../../control/actions.ts";
import { parse } from "../flags/args.ts";
import { controlContext } from "../control-context.ts";
import { EXIT, UsageError } from "../errors.ts";

export const ANSWER_HELP = `Usage: subagents answer ID "text"
       subagents answer ID -            (the answer from standard input)

Answers the question a running sub-agent asked (its ask_parent tool, or a confirm/select/input of one of its
extensions) while it waits. For a confirm, "y"/"yes" allows and anything else refuses; for a choice, the
option's text. A background run's questions wait up to subagents.askTimeout (default 600 s) and are listed
in its log and window ("? asks: …").

Exit codes: 0 answered; 1 not answered (no open question, or the session is not running — the reason is
printed); 2 usage error.`;

export async function cmdAnswer(argv: string[]): Promise<number> {
  const { values, positionals } = parse("answer", argv, {});
  if (values.help) {
    console.log(ANSWER_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 2)
    throw new UsageError(
      `answer: expected ID and "text" (got ${positionals.length} argument${positionals.length === 1 ? "" : "s"}). See 'subagents answer --help'.`,
    );
  const [id, raw] = positionals;
  const text = raw === "-" ? fs.readFileSync(0, "utf8").trim() : raw;
  if (!text.trim()) throw new UsageError("answer: the answer is empty.");
  const c = controlContext();
  const r = await steerSession(c.state(id), id, text, () => c.store.getSession(id)?.status ?? "finished", "answer");
  if (!r.ok) {
    process.stderr.write(`subagents: answer: not answered: ${r.reason}.\n`);
    return EXIT.taskFailed;
  }
  process.stderr.write(`answered ${id}\n`);
  return EXIT.ok;
}
