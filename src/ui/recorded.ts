// A session's recorded end as the windows show it: the outcome of its last run (or why it has none), and the
// window `delegate` draws for a task that ended. Used by wait, attach and the /subagents fleet view.
import { DEFAULT_AGENT } from "../core/run/task-types.ts";
import type { TaskOutcome } from "../core/run/task-types.ts";
import { NEVER_STARTED_MESSAGE, type SessionRecord } from "../core/store/store-types.ts";
import { runResult } from "../core/types.ts";
import { CallWindows } from "./call-windows.ts";
import type { WindowView } from "./windows.ts";

export function outcomeOf(id: string, s: SessionRecord | null, queued: boolean): TaskOutcome {
  const r = s?.runs[s.runs.length - 1];
  // No run recorded (an owner of an older build listed it): still queued under its owner, or its owner ended first.
  if (!s || !r)
    return {
      sessionId: id,
      name: s?.name ?? "",
      agent: s?.agent ?? DEFAULT_AGENT,
      result: runResult({ status: "error", error: queued ? "not started yet" : NEVER_STARTED_MESSAGE }),
    };
  const result = runResult({
    status: r.status === "completed" ? "completed" : "error",
    output: r.output,
    error: r.status === "running" ? "still running" : r.status === "queued" ? "not started yet" : r.error,
    errorCode: r.errorCode,
    usage: r.usage,
    model: r.model,
    exitCode: r.exitCode,
    toolCount: r.toolCount,
    durationMs: (r.endedAt ?? Date.now()) - r.startedAt,
    ...(r.warnings?.length ? { warnings: r.warnings } : {}),
  });
  return { sessionId: s.id, name: s.name, agent: s.agent, result };
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
