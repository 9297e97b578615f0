// Live progress of a running call as `notifications/progress`, sent only when the client's request carried a
// progress token: at most every PROGRESS_INTERVAL_MS while its children report (the latest state always goes out
// last), and at least every HEARTBEAT_MS while they are quiet (a child's long command sends nothing), so a client
// that resets its timeout on progress keeps waiting. One line: the tasks' states, the call's elapsed time, the
// latest activity, and each task's state, e.g.
// `Sub-agents: 1 running, 1 done · 42s · api: → read src/api.ts · api running 40s, web done`.
// A task's `statusMessage` (Tasks extension) is the same line.
import { realClock } from "../core/host.ts";
import { clip } from "../ui/text-width.ts";
import { Throttle } from "../ui/throttle.ts";
import { globalHeader, type WindowView } from "../ui/windows.ts";
import type { CallRun } from "./call-adapter.ts";
import type { ToolContext } from "./protocol/session.ts";

export const PROGRESS_INTERVAL_MS = 250;
/** The longest a running call goes without a progress message (a client's 4 s timeout that progress resets holds
 *  with room to spare on a busy machine). */
export const HEARTBEAT_MS = 1000;
const MESSAGE_WIDTH = 400;

const secs = (ms: number) => `${Math.max(0, Math.floor(ms / 1000))}s`;

function taskState(w: WindowView): string {
  if (w.status === "running") return `${w.name} ${w.starting ? "starting" : "running"} ${secs(w.elapsedMs)}`;
  return `${w.name} ${w.status === "completed" ? "done" : w.status}`;
}

/** One line: every task's state, the call's time, the last line of the task that changed last, each task. */
export function progressMessage(run: CallRun, now = Date.now()): string {
  const { windows } = run.windows.snapshot(now, 1);
  const latest = windows[run.lastActive];
  const line = latest?.lines.at(-1)?.trim();
  const parts = [
    globalHeader(windows),
    secs(now - run.startedAt),
    ...(line ? [`${latest.name}: ${line}`] : []),
    windows.map(taskState).join(", "),
  ];
  return clip(parts.join(" · "), MESSAGE_WIDTH);
}

/** Reports the call's progress to this request until the returned function stops it. `seq` carries the progress
 * count across the rounds of one call: a token reused by a retried request still sees it grow. */
export function reportProgress(ctx: ToolContext, run: CallRun, seq: { n: number }): () => void {
  const token = ctx.progressToken;
  if (token === undefined) return () => {};
  const send = () =>
    ctx.notify("notifications/progress", { progressToken: token, progress: ++seq.n, message: progressMessage(run) });
  const throttle = new Throttle(send, PROGRESS_INTERVAL_MS, realClock);
  const listener = () => throttle.push(undefined);
  run.listeners.add(listener);
  const heartbeat = setInterval(listener, HEARTBEAT_MS);
  listener();
  return () => {
    clearInterval(heartbeat);
    run.listeners.delete(listener);
    throttle.cancel();
  };
}
