// One shell command of ours on this machine from spawn to exit, bounded: a task hook (task-hooks.ts) or an isolated
// task's setup command (task-setup.ts). It runs in a process group of its own under a run mark of its own, so at its
// end, its timeout or a stop, whatever it started is ended with it (and a forced stop of the front ends it with the
// runs); what it prints is kept within bounds, head and tail.
import type { Clock, ExitInfo, Host } from "../../host.ts";
import { endLeftovers, endProcesses } from "./leftovers.ts";
import { liveMarks, MARK_ENV, newMark } from "./marks.ts";
import { waitFor } from "./kill.ts";

export type ShellRun = {
  /** The command to run, e.g. ["/bin/sh", "-c", "…"] behind a prefix that enters a worktree's view. */
  argv: string[];
  cwd: string;
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** Left out of this process's environment. */
  without?: string[];
  stdin?: string;
  timeoutMs: number;
  /** The task it runs for (its mark names it). */
  sessionId: string;
  /** Which output to keep: stderr alone (a hook's failure), or both streams as they come (a setup's). */
  keep: "stderr" | "both";
  /** Kept at most this many characters: the first quarter and the rest from the end. */
  maxChars: number;
  /** Between SIGTERM and SIGKILL when it is ended. */
  graceMs: number;
  signal?: AbortSignal;
};

export type ShellEnd = { end: ExitInfo | "timeout" | "aborted"; output: string };

/** A command as a message names it: its first 77 characters when it is longer than 80. */
export const shortCommand = (command: string) => (command.length > 80 ? `${command.slice(0, 77)}…` : command);

/** How a command ended, as a message says it: `exit 2`, `signal SIGKILL`. */
export const exitText = (e: ExitInfo) => (e.code === null ? `signal ${e.signal}` : `exit ${e.code}`);

/** Keeps the head and the tail of a stream of text (the start says what ran, the end usually says what failed). */
function headTailKeeper(max: number): { take(text: string): void; text(): string } {
  const q = Math.floor(max / 4);
  let head = "";
  let tail = "";
  let total = 0;
  return {
    take(text) {
      total += text.length;
      const room = Math.max(0, q - head.length);
      head += text.slice(0, room);
      tail = (tail + text.slice(room)).slice(-(max - q));
    },
    text: () =>
      total <= max ? head + tail : `${head}\n…(${total - head.length - tail.length} characters cut)…\n${tail}`,
  };
}

export async function runShell(engine: { host: Host; clock: Clock }, run: ShellRun): Promise<ShellEnd> {
  const { host, clock } = engine;
  const mark = newMark(host.env[MARK_ENV], host.pid, run.sessionId);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(host.env)) if (v !== undefined) env[k] = v;
  for (const k of run.without ?? []) delete env[k];
  Object.assign(env, run.env, { [MARK_ENV]: mark });
  liveMarks.add(mark);
  try {
    const proc = host.spawn({
      cmd: run.argv,
      cwd: run.cwd,
      env,
      stdin: run.stdin ?? null,
      fd3: false,
      ownGroup: true,
    });
    const kept = headTailKeeper(run.maxChars);
    const drain = async (stream: AsyncIterable<Uint8Array>, keep: boolean) => {
      const decoder = new TextDecoder();
      for await (const chunk of stream) if (keep) kept.take(decoder.decode(chunk, { stream: true }));
    };
    const drained = Promise.all([drain(proc.stdout, run.keep === "both"), drain(proc.stderr, true)]).catch(() => {});
    const stopped = new Promise<"aborted">((resolve) => {
      if (run.signal?.aborted) resolve("aborted");
      run.signal?.addEventListener("abort", () => resolve("aborted"), { once: true });
    });
    const end = await Promise.race([waitFor(clock, proc.exited, run.timeoutMs), stopped]);
    if (end === "timeout" || end === "aborted")
      await endProcesses(host, clock, [{ pid: proc.pid, mark, command: run.argv.join(" ") }], run.graceMs);
    // What it left running in the background ends with it.
    await endLeftovers(host, clock, mark, { graceMs: run.graceMs });
    await waitFor(clock, drained, 1000);
    return { end, output: kept.text() };
  } finally {
    liveMarks.delete(mark);
  }
}
