// `subagents output ID`, `session ID`, `sessions`: read-only views of the session store. Exit codes say how the
// session ended: 0 completed (or still running), 1 failed or not found.
import { decimal } from "../../core/decimal.ts";
import type { SessionRecord, SessionSummary } from "../../core/store/store-types.ts";
import { addUsage, emptyUsage } from "../../core/types.ts";
import { formatSessionTranscript, latestOutput, sessionNotFound } from "../../core/store/transcript.ts";
import { age, count, duration } from "../../ui/format.ts";
import { sessionHeader, transcriptView } from "../../ui/session-view.ts";
import { renderTable, type Column } from "../../ui/table.ts";
import type { Style } from "../../ui/windows.ts";
import { noPositionals, parse } from "../flags/args.ts";
import { OUTPUT_FLAGS, SESSION_FLAGS, SESSIONS_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { cliContext, dataDir, openStore } from "../engine.ts";
import { runningLine, runningSessions } from "../../control/running.ts";
import { EXIT, UsageError } from "../errors.ts";
import { OUTPUT_HELP, SESSION_HELP, SESSIONS_HELP } from "../help.ts";
import { colorStyle, resultText, streamWidth } from "../terminal/style.ts";

/** The common start of `output ID` and `session ID`: flags, the one id, the stored session (or an exit code). */
function sessionArg(command: "output" | "session", argv: string[], helpText: string) {
  const { values, positionals } = parse(
    command,
    argv,
    parseOptions(command === "output" ? OUTPUT_FLAGS : SESSION_FLAGS),
  );
  if (values.help) return help(helpText);
  if (positionals.length !== 1)
    throw new UsageError(
      `${command}: expected one session ID (got ${positionals.length}). See 'subagents help ${command}'.`,
    );
  const id = positionals[0];
  const store = openStore(cliContext(process.cwd()));
  const record = store.getSession(id);
  if (!record || record.runs.length === 0) {
    process.stderr.write(`subagents: ${sessionNotFound(id)} List them with: subagents sessions\n`);
    return EXIT.taskFailed;
  }
  return { id, values, store, record, last: record.runs[record.runs.length - 1] };
}

const exitFor = (record: SessionRecord) => (record.status === "error" ? EXIT.taskFailed : EXIT.ok);

export function cmdOutput(argv: string[]): number {
  const arg = sessionArg("output", argv, OUTPUT_HELP);
  if (typeof arg === "number") return arg;
  const { id, values, record, last } = arg;
  const text = latestOutput(record);
  if (values.json) {
    console.log(
      JSON.stringify({
        type: "output",
        sessionId: id,
        status: last.status,
        taskName: record.name,
        runCount: record.runs.length,
        output: text,
        error: last.error,
      }),
    );
    return exitFor(record);
  }
  // The header goes to stderr: `subagents output ID > result.md` keeps only the output.
  process.stderr.write(`${sessionHeader(record, colorStyle(process.stderr, values["no-color"])).join("\n")}\n\n`);
  process.stdout.write(resultText(process.stdout, text));
  return exitFor(record);
}

export function cmdSession(argv: string[]): number {
  const arg = sessionArg("session", argv, SESSION_HELP);
  if (typeof arg === "number") return arg;
  const { id, values, store, record, last } = arg;
  const messages = new Map(record.runs.map((r) => [r.id, store.getMessages(r.id)]));
  if (values.json) {
    const messageCount = [...messages.values()].reduce((n, m) => n + m.length, 0);
    const transcript = formatSessionTranscript(record, messages);
    console.log(
      JSON.stringify({
        type: "session",
        sessionId: id,
        status: last.status,
        taskName: record.name,
        messageCount,
        exitCode: last.exitCode,
        model: last.model,
        pi: last.pi,
        runCount: record.runs.length,
        // What all its runs spent, and their wall time (the figures a trace's invoke_agent spans carry).
        usage: record.runs.reduce((sum, r) => addUsage(sum, r.usage), emptyUsage()),
        durationMs: record.runs.reduce((n, r) => n + (r.endedAt === undefined ? 0 : r.endedAt - r.startedAt), 0),
        ...(record.schedule ? { schedule: record.schedule } : {}),
        ...(last.warnings?.length ? { warnings: last.warnings } : {}),
        transcript,
      }),
    );
    return exitFor(record);
  }
  console.log(transcriptView(record, messages, colorStyle(process.stdout, values["no-color"])).join("\n"));
  return exitFor(record);
}

/** The columns of `sessions`; `--wide` adds the rest and never shortens. */
function sessionColumns(style: Style, rows: SessionSummary[], wide: boolean): Column[] {
  const paint = (status: string) =>
    status === "completed"
      ? style.green
      : status === "error"
        ? style.red
        : status === "running" || status === "queued"
          ? style.yellow
          : (s: string) => s;
  return [
    { header: "ID" },
    { header: "STATUS", color: (cell, row) => paint(rows[row].status)(cell) },
    { header: "AGENT", flex: true, min: 7, drop: 1 },
    ...(wide ? [{ header: "RUNS", right: true }] : []),
    { header: "COST", right: true, drop: 3 },
    ...(wide
      ? [
          { header: "TOKENS IN/OUT/CACHE", right: true },
          { header: "TIME", right: true },
        ]
      : []),
    { header: "UPDATED", right: true, drop: 2 },
    { header: "NAME", flex: true, min: 8 },
    ...(wide ? [{ header: "CWD" }] : []),
  ];
}

export function cmdSessions(argv: string[]): number {
  const { values, positionals } = parse("sessions", argv, parseOptions(SESSIONS_FLAGS));
  if (values.help) return help(SESSIONS_HELP);
  noPositionals("sessions", positionals);
  const limit = values.limit === undefined ? 20 : decimal(values.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError(`sessions: --limit must be a positive whole number (got "${values.limit}").`);
  const ctx = cliContext(process.cwd());
  const store = openStore(ctx);
  if (values.running) return listRunning(store, dataDir(ctx), !!values.json);
  const rows = store.listSessions({ limit });
  if (values.json) {
    for (const r of rows) console.log(JSON.stringify({ type: "session", ...r }));
    return EXIT.ok;
  }
  if (!rows.length) {
    console.log('No sessions yet. Start one with: subagents run AGENT "task"');
    return EXIT.ok;
  }
  const now = Date.now();
  const style = colorStyle(process.stdout, values["no-color"]);
  const wide = !!values.wide;
  const cells = rows.map((r) => [
    r.id,
    r.lastErrorCode === "SKIPPED" ? "skipped" : r.status,
    r.agent,
    ...(wide ? [String(r.runCount)] : []),
    r.cost ? `$${r.cost.toFixed(4)}` : "-",
    ...(wide
      ? [`${count(r.tokens.input)}/${count(r.tokens.output)}/${count(r.tokens.cacheRead)}`, duration(r.durationMs)]
      : []),
    `${age(now - r.updatedAt)} ago`,
    r.name,
    ...(wide ? [r.cwd] : []),
  ]);
  const lines = renderTable(sessionColumns(style, rows, wide), cells, {
    width: wide ? Infinity : streamWidth(process.stdout),
    style,
  });
  console.log(lines.join("\n"));
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
