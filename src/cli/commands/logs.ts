// `subagents logs ID [-f]`: a background session's events as readable lines; -f follows them until the run
// ends. Sessions run in the foreground have no event log: their transcript is shown instead.
import { StringDecoder } from "node:string_decoder";
import { printable } from "../../core/sanitize.ts";
import { LOGS_FLAGS } from "../flags/command-flags.ts";
import * as fs from "node:fs";
import { formatSessionTranscript } from "../../core/store/transcript.ts";
import { parse } from "../flags/args.ts";
import { optionsBlock, parseOptions } from "../flags/flag.ts";
import { controlContext } from "../control-context.ts";
import { EXIT, UsageError } from "../errors.ts";
import { sessionLogPath } from "../background/session-log.ts";

export const LOGS_HELP = `Usage: subagents logs ID [-f]

Prints a background session's events as readable lines: tool calls and results, the model's messages,
steer messages, retries, the final status. For a session run in the foreground, prints its transcript.

${optionsBlock(LOGS_FLAGS)}`;

const POLL_MS = 200;

export async function cmdLogs(argv: string[]): Promise<number> {
  const { values, positionals } = parse("logs", argv, parseOptions(LOGS_FLAGS));
  if (values.help) {
    console.log(LOGS_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError("logs: expected one session ID. See 'subagents logs --help'.");
  const [id] = positionals;
  const c = controlContext();
  if (c.state(id).kind === "unknown") {
    process.stderr.write(`subagents: logs: no session "${id}".\n`);
    return EXIT.taskFailed;
  }
  const file = sessionLogPath(c.data, id);
  let offset = 0;
  // What the children wrote is in the log as they wrote it: printed, nothing of it acts on the terminal; a character
  // split between two reads is kept for the next.
  const utf8 = new StringDecoder("utf8");
  const flush = () => {
    const size = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    if (size <= offset) return;
    const fd = fs.openSync(file, "r");
    const buf = Buffer.alloc(size - offset);
    fs.readSync(fd, buf, 0, buf.length, offset);
    fs.closeSync(fd);
    offset = size;
    process.stdout.write(printable(utf8.write(buf)));
  };
  if (!fs.existsSync(file) && c.state(id).kind === "done") {
    const record = c.store.getSession(id)!;
    const text = formatSessionTranscript(record, new Map(record.runs.map((r) => [r.id, c.store.getMessages(r.id)])));
    process.stdout.write(printable(text.endsWith("\n") ? text : `${text}\n`));
    return EXIT.ok;
  }
  flush();
  if (!values.follow) return EXIT.ok;
  while (c.state(id).kind === "active") {
    await new Promise((r) => setTimeout(r, POLL_MS));
    flush();
  }
  flush();
  return EXIT.ok;
}
