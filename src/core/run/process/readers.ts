// Starting the child (its own process, or a lease on a kept one) and reading its three streams under their byte
// limits: events (fd 3, or stdout in json mode, or another harness's stdout) to the event rules, stderr kept as
// its first characters and a tail.
import type { ChildProcess, Host } from "../../host.ts";
import { TailBuffer } from "../../truncate.ts";
import type { ChildEvent } from "../../types.ts";
import { drain } from "./drain.ts";
import { LineSplitter } from "./line-splitter.ts";
import { MARK_ENV } from "./marks.ts";
import type { RunLimits, RunSpec } from "./run-spec.ts";
import { STDERR_HEAD_CHARS } from "./stderr-summary.ts";
import type { Stop } from "./stops.ts";
import { JsonModeParser, jsonModeKeep, MAX_EVENT_LINE, parseCompactLine } from "./transport.ts";

/** The child's process; throws when it cannot start. */
export function spawnChild(host: Host, spec: RunSpec, stdin: string, mark: string | null): ChildProcess {
  // The child reports delivery on fd 3, so control needs the compact transport.
  const control =
    (!!spec.onControl || !!spec.team || !!spec.budget || !!spec.callSpend || !!spec.rateGate || !!spec.ask) &&
    spec.transport === "compact";
  const env = {
    ...spec.env,
    ...(control ? { PI_SUBAGENT_CONTROL_FD: "4" } : {}),
    ...(mark ? { [MARK_ENV]: mark } : {}),
  };
  const start = {
    cmd: spec.argv,
    cwd: spec.cwd,
    env,
    stdin,
    fd3: spec.transport === "compact",
    control,
    ...(spec.fd5 !== undefined ? { fd5: spec.fd5 } : {}),
  };
  return spec.reuse ? spec.reuse.pool.lease(host, start, spec.sessionFile, spec.reuse.files) : host.spawn(start);
}

export type StreamReaders = {
  /** Resolve at each stream's end (grandchildren may hold a pipe open: never wait for them alone). */
  done: Promise<unknown>;
  /** The last lines of a partial event line, and a foreign parser's end events. */
  end(exitCode: number | null): void;
  stderr(): { tail: string; head: string; whole: boolean };
};

export function readStreams(
  proc: ChildProcess,
  spec: RunSpec,
  limits: RunLimits,
  onEvent: (ev: ChildEvent) => void,
  stopWith: (s: Stop) => void,
): StreamReaders {
  const foreign = spec.parser?.() ?? null;
  const parser = foreign ?? (spec.transport === "json" ? new JsonModeParser() : null);
  const onLine = (line: string, cut: boolean) => {
    // Our child extension fits every event in a line (transport.ts cutText): a longer one lost an event whole, the
    // answer perhaps, so the task cannot end as if nothing were missing. Another harness's lines alike; only pi's
    // JSON mode has a line whose head still says something (JsonModeParser).
    if (cut && (foreign || !parser))
      return stopWith({
        code: "SUBAGENT_OUTPUT_TRUNCATED",
        message: `Sub-agent sent an event line over the ${MAX_EVENT_LINE / 1048576} MB limit (${line.slice(0, 40)}…); it was dropped and the child stopped`,
      });
    if (foreign) {
      for (const ev of foreign.parse(line)) onEvent(ev);
      return;
    }
    const ev = parser ? (parser as JsonModeParser).parse(line, cut) : parseCompactLine(line);
    if (ev) onEvent(ev);
  };
  const splitter = new LineSplitter(onLine, MAX_EVENT_LINE, parser && !foreign ? jsonModeKeep : undefined);
  const counted = (limit: number, what: string, sink: (c: Uint8Array) => void) => {
    let bytes = 0;
    return (c: Uint8Array) => {
      bytes += c.byteLength;
      if (bytes > limit) {
        stopWith({
          code: "SUBAGENT_OUTPUT_TRUNCATED",
          message: `Sub-agent ${what} exceeded the ${Math.round(limit / 1048576)} MB limit and was stopped`,
        });
        return false;
      }
      sink(c);
      return true;
    };
  };
  const stderr = new TailBuffer(limits.stderrTail);
  // The start of stderr too: a crash's first exception line is often long gone from the tail.
  let stderrHead = "";
  let stderrChars = 0;
  const events = spec.transport === "json" ? proc.stdout : proc.fd3;
  const decoder = new TextDecoder();
  const readers = [
    drain(
      events,
      counted(limits.eventBytes, "event output", (c) => splitter.push(c)),
    ),
    spec.transport === "json"
      ? Promise.resolve()
      : drain(
          proc.stdout,
          counted(limits.stdoutBytes, "stdout", () => {}),
        ),
    drain(
      proc.stderr,
      counted(limits.stderrBytes, "stderr", (c) => {
        const text = decoder.decode(c, { stream: true });
        if (stderrHead.length < STDERR_HEAD_CHARS) stderrHead += text.slice(0, STDERR_HEAD_CHARS - stderrHead.length);
        stderrChars += text.length;
        stderr.append(text);
      }),
    ),
  ];
  return {
    done: Promise.all(readers),
    end(exitCode) {
      splitter.end();
      if (foreign?.end) for (const ev of foreign.end(exitCode)) onEvent(ev);
    },
    stderr() {
      const tail = stderr.toString();
      return { tail, head: stderrHead, whole: stderrChars <= tail.length };
    },
  };
}
