// Live progress of a running call as `notifications/progress`, sent only when the client's request carried a
// progress token, at most every PROGRESS_INTERVAL_MS (the latest state always goes out last): the call's task
// states and the latest activity, e.g. `Sub-agents: 1 running, 1 done · api: → read src/api.ts`.
import { realClock } from "../core/host.ts";
import { clip } from "../ui/text-width.ts";
import { Throttle } from "../ui/throttle.ts";
import { globalHeader } from "../ui/windows.ts";
import type { CallRun } from "./call-adapter.ts";
import type { ToolContext } from "./protocol/session.ts";

export const PROGRESS_INTERVAL_MS = 250;
const MESSAGE_WIDTH = 200;

/** One line: every task's state, then the last line of the task that changed last. */
export function progressMessage(run: CallRun): string {
  const { windows } = run.windows.snapshot(Date.now(), 1);
  const latest = windows[run.lastActive];
  const line = latest?.lines.at(-1)?.trim();
  return clip(`${globalHeader(windows)}${line ? ` · ${latest.name}: ${line}` : ""}`, MESSAGE_WIDTH);
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
  listener();
  return () => {
    run.listeners.delete(listener);
    throttle.cancel();
  };
}
