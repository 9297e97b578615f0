// One shell command of ours on this machine from spawn to exit, bounded: a task hook (task-hooks.ts) or an isolated
// task's setup command (task-setup.ts). It runs in a process group of its own under a run mark of its own, so at its
// end, its timeout or a stop, whatever it started is ended with it (and a forced stop of the front ends it with the
// runs); what it prints is kept within bounds, head and tail. Like a child pi, it watches its owner: an owner killed
// with SIGKILL cannot end it, so the shell that runs it ends its own process group within about a second of the
// owner's death (SIGTERM, 2 s, SIGKILL) — a setup never runs on in a worktree the next clean-up removes.
import type { Clock, ExitInfo, Host } from "../../host.ts";
import { endLeftovers, endProcesses } from "./leftovers.ts";
import { liveMarks, MARK_ENV, newMark } from "./marks.ts";
import { waitFor } from "./kill.ts";

export type ShellRun = {
  /** The shell command to run. */
  command: string;
  /** What it runs behind: a prefix that enters a worktree's view (each step execs the next). */
  prefix?: string[];
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

/**
 * The shell our commands run in: the command (its stdin kept), and beside it a watch on the owner — this shell's
 * parent ($1) — once a second: its parent link in /proc, which changes the moment the owner dies, even while the
 * dead owner is not yet reaped (`kill -0` where there is no /proc). The owner gone, the whole group is told to end
 * and, once the command is gone or 2 s later, killed. The command's status is this shell's (its signal too), and
 * the watch ends with it. (Fields are read from stat lines by position: this shell's name there is `sh`; a command
 * whose name holds a space is merely waited for the 2 s.)
 */
export const OWNER_WATCH = [
  "o=$1 c=$2 me=$$",
  'runs() { if [ -r /proc/$1/stat ]; then read -r _ _ s _ < /proc/$1/stat; [ "$s" != Z ]',
  '  else [ ! -d /proc/self ] && kill -0 "$1" 2>/dev/null; fi; }',
  'owned() { if [ -r /proc/$me/stat ]; then read -r _ _ _ p _ < /proc/$me/stat; [ "$p" = "$o" ]',
  '  else kill -0 "$o" 2>/dev/null; fi; }',
  "exec 3<&0",
  '/bin/sh -c "$c" 0<&3 3<&- &',
  "cp=$!",
  "( trap 'kill $t 2>/dev/null; exit 0' TERM",
  "  while owned; do sleep 1 & t=$!; wait $t; done",
  "  trap '' TERM; kill -TERM 0; n=0",
  '  while runs "$cp" && [ "$n" -lt 20 ]; do sleep 0.1; n=$((n + 1)); done',
  "  kill -KILL 0 ) 3<&- >/dev/null 2>&1 &",
  "w=$!",
  "exec 3<&-",
  'wait "$cp"',
  "st=$?",
  'kill "$w" 2>/dev/null',
  'if [ "$st" -gt 128 ]; then trap - TERM INT HUP; kill -s "$(kill -l "$st")" "$me"; fi',
  'exit "$st"',
].join("\n");

/** The argv that runs `command` watched by this process (OWNER_WATCH), behind `prefix`. */
export const watchedShell = (command: string, owner: number, prefix: string[] = []) => [
  ...prefix,
  "/bin/sh",
  "-c",
  OWNER_WATCH,
  "subagents-shell",
  String(owner),
  command,
];

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
    const argv = watchedShell(run.command, host.pid, run.prefix);
    const proc = host.spawn({
      cmd: argv,
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
      await endProcesses(host, clock, [{ pid: proc.pid, mark, command: run.command }], run.graceMs);
    // What it left running in the background ends with it.
    await endLeftovers(host, clock, mark, { graceMs: run.graceMs });
    await waitFor(clock, drained, 1000);
    return { end, output: kept.text() };
  } finally {
    liveMarks.delete(mark);
  }
}
