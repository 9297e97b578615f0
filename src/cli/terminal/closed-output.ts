// A closed stdout or stderr (`subagents delegate … | head -1`, a reader that went away) is ordinary: it means nobody
// reads that stream any more. Writes to it are dropped from then on — never an EPIPE stack trace, never a crash that
// would take running children with it. A command that only shows something (sessions, logs --follow, attach, wait)
// then ends quietly, as Unix tools do (exit 141, a SIGPIPE's status; main.ts). A command running work — a call in the
// foreground, a batch, the MCP server — holds its output (holdOutput): the work is not stopped, and a call says so
// once on the other stream if that one is still read. Why finish rather than stop: the tasks are what the command
// was asked for and are paid for as they run; the pipe was only their display, and their results stay in the store
// (`subagents output ID`). Ctrl-C stops them as always; `--background` is for not waiting at all.
export type OutputName = "stdout" | "stderr";

/** Errors of a write whose reader is gone: a pipe's reader exited (EPIPE), a terminal hung up (EIO), a socket reset. */
const GONE = new Set(["EPIPE", "EIO", "ECONNRESET", "ERR_STREAM_DESTROYED", "ERR_STREAM_WRITE_AFTER_END"]);
const closed = new Set<OutputName>();
const guarded = new Set<OutputName>();
let holds = 0;

/** While held, a closed stdout does not end the command (its work goes on); the release function ends the hold. */
export function holdOutput(): () => void {
  holds++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    holds--;
  };
}

/** Whether a command running work holds its output now. */
export const outputHeld = () => holds > 0;
const listeners: ((which: OutputName) => void)[] = [];

/** Whether nobody reads this stream any more. */
export const outputClosed = (which: OutputName) => closed.has(which);

/** Told once per stream when its reader goes away. */
export function onOutputClosed(fn: (which: OutputName) => void): () => void {
  listeners.push(fn);
  return () => {
    const i = listeners.indexOf(fn);
    if (i >= 0) listeners.splice(i, 1);
  };
}

function markClosed(which: OutputName): void {
  if (closed.has(which)) return;
  closed.add(which);
  for (const fn of [...listeners]) fn(which);
}

const goneError = (err: unknown) => GONE.has((err as { code?: string })?.code ?? "");

/** Makes process.stdout and process.stderr drop what is written once their reader is gone (a write that throws, or
 *  the stream's error event), and calls a write's callback as if written so nothing waits on it. Once per process. */
export function guardOutput(): void {
  for (const which of ["stdout", "stderr"] as const) {
    if (guarded.has(which)) continue;
    guarded.add(which);
    const stream = process[which];
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    stream.write = ((...args: unknown[]) => {
      const done = args.find((a) => typeof a === "function") as ((e?: Error | null) => void) | undefined;
      if (closed.has(which)) {
        if (done) queueMicrotask(() => done(null));
        return true;
      }
      try {
        return write(...args);
      } catch (err) {
        if (!goneError(err)) throw err;
        markClosed(which);
        if (done) queueMicrotask(() => done(null));
        return true;
      }
    }) as typeof stream.write;
    stream.on("error", (err) => {
      if (goneError(err)) markClosed(which);
      else throw err;
    });
  }
}

/** The line a call in the foreground says (on the other stream, when that one is still read) once one closes. */
export const closedOutputLine = (which: OutputName, running: number) =>
  `subagents: ${which} closed (its reader went away): ${running ? `the call's ${running} unfinished task(s) go on to their end and are recorded` : "the call goes on to its end"} — Ctrl-C stops them; see them with 'subagents sessions', their results with 'subagents output ID'`;
