// A session's recorded end as the windows show it: the outcome of its last run (or why it has none), and the
// window `delegate` draws for a task that ended. Used by wait, attach and the /subagents fleet view.
import type { TaskOutcome } from "../core/run/task-types.ts";
import type { SessionRecord } from "../core/store/store-types.ts";
import { emptyUsage } from "../core/types.ts";
import { CallWindows } from "./call-windows.ts";
import type { WindowView } from "./windows.ts";

export function outcomeOf(id: string, s: SessionRecord | null, queued: boolean): TaskOutcome {
  const r = s?.runs[s.runs.length - 1];
  // No run recorded: still queued under its owner (on timeout), or its owner ended before starting it.
  if (!s || !r)
    return {
      sessionId: id,
      name: s?.name ?? "",
      agent: s?.agent ?? "default",
      result: {
        status: "error",
        output: "",
        error: queued ? "not started yet" : "never started: its owner ended first",
        usage: emptyUsage(),
        exitCode: null,
        toolCount: 0,
        messages: [],
        stderrTail: "",
        durationMs: 0,
      },
    };
  const status = r.status === "completed" ? "completed" : "error";
  const durationMs = (r.endedAt ?? Date.now()) - r.startedAt;
  return {
    sessionId: s.id,
    name: s.name,
    agent: s.agent,
    result: {
      status,
      output: r.output,
      error: r.status === "running" ? "still running" : r.status === "queued" ? "not started yet" : r.error,
      errorCode: r.errorCode,
      usage: r.usage,
      model: r.model,
      exitCode: r.exitCode,
      toolCount: r.toolCount,
      messages: [],
      stderrTail: "",
      durationMs,
      ...(r.warnings?.length ? { warnings: r.warnings } : {}),
    },
  };
}

/** The windows of recorded ends (as `delegate` draws them when its tasks end). */
export function endedViews(outcomes: TaskOutcome[]): WindowView[] {
  const now = Date.now();
  const w = new CallWindows(
    outcomes.map((o) => ({ name: o.name, sessionId: o.sessionId, profile: o.agent, timeoutSec: 0 })),
    0,
  );
  outcomes.forEach((o, i) => {
    w.end(i, o, now);
    w.views[i].elapsedMs = o.result.durationMs;
  });
  return w.views;
}
