// `subagents output ID`, `session ID`, `sessions`: read-only views of the session store.
import { formatSessionTranscript, latestOutput, sessionNotFound } from "../core/store/transcript.ts";
import { sessionRow } from "../ui/format.ts";
import { parse } from "./args.ts";
import { cliContext, dataDir, openStore } from "./engine.ts";
import { runningLine, runningSessions } from "./running.ts";
import { EXIT, UsageError } from "./errors.ts";
import { OUTPUT_HELP, SESSION_HELP, SESSIONS_HELP } from "./help.ts";

function oneId(command: string, positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError(`${command}: expected one session ID. See 'subagents ${command} --help'.`);
  return positionals[0];
}

export function cmdOutput(argv: string[]): number {
  const { values, positionals } = parse("output", argv, { json: { type: "boolean" } });
  if (values.help) return help(OUTPUT_HELP);
  const id = oneId("output", positionals);
  const store = openStore(cliContext(process.cwd()));
  const record = store.getSession(id);
  if (!record || record.runs.length === 0) {
    process.stderr.write(`${sessionNotFound(id)}\n`);
    return EXIT.taskFailed;
  }
  const text = latestOutput(record);
  const last = record.runs[record.runs.length - 1];
  if (values.json) {
    console.log(JSON.stringify({ type: "output", sessionId: id, status: last.status, taskName: record.name, runCount: record.runs.length, output: text, error: last.error }));
  } else process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  return EXIT.ok;
}

export function cmdSession(argv: string[]): number {
  const { values, positionals } = parse("session", argv, { json: { type: "boolean" } });
  if (values.help) return help(SESSION_HELP);
  const id = oneId("session", positionals);
  const store = openStore(cliContext(process.cwd()));
  const record = store.getSession(id);
  if (!record || record.runs.length === 0) {
    process.stderr.write(`${sessionNotFound(id)}\n`);
    return EXIT.taskFailed;
  }
  const messages = new Map(record.runs.map((r) => [r.id, store.getMessages(r.id)]));
  const text = formatSessionTranscript(record, messages);
  if (values.json) {
    const last = record.runs[record.runs.length - 1];
    const messageCount = [...messages.values()].reduce((n, m) => n + m.length, 0);
    console.log(JSON.stringify({ type: "session", sessionId: id, status: last.status, taskName: record.name, messageCount, exitCode: last.exitCode, model: last.model, runCount: record.runs.length, transcript: text }));
  } else process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  return EXIT.ok;
}


export function cmdSessions(argv: string[]): number {
  const { values, positionals } = parse("sessions", argv, { limit: { type: "string" }, json: { type: "boolean" }, running: { type: "boolean" } });
  if (values.help) return help(SESSIONS_HELP);
  if (positionals.length) throw new UsageError(`sessions: unexpected argument "${positionals[0]}". See 'subagents sessions --help'.`);
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`sessions: --limit must be a positive whole number (got "${values.limit}").`);
  const ctx = cliContext(process.cwd());
  const store = openStore(ctx);
  if (values.running) return listRunning(store, dataDir(ctx), !!values.json);
  const rows = store.listSessions({ limit });
  if (values.json) {
    for (const r of rows) console.log(JSON.stringify({ type: "session", ...r }));
    return EXIT.ok;
  }
  if (!rows.length) {
    console.log("No sessions yet. Start one with: subagents run AGENT \"task\"");
    return EXIT.ok;
  }
  const now = Date.now();
  for (const r of rows) console.log(sessionRow(r, now));
  return EXIT.ok;
}

function listRunning(store: ReturnType<typeof openStore>, data: string, json: boolean): number {
  const rows = runningSessions(store, data);
  if (json) for (const r of rows) console.log(JSON.stringify({ type: "running", ...r }));
  else if (!rows.length) console.log("Nothing is running.");
  else for (const r of rows) console.log(runningLine(r, Date.now()));
  return EXIT.ok;
}

function help(text: string): number {
  console.log(text);
  return EXIT.ok;
}
