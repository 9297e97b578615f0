// A call run without children for the MCP front's unit tests: its windows and listeners, outcomes the test ends
// when it likes, and every abort reason kept.
import type { TaskOutcome } from "../../../src/core/run/task-types.ts";
import type { CallRun } from "../../../src/mcp/call-adapter.ts";
import { CallWindows } from "../../../src/ui/call-windows.ts";

/** A run of one task per session id (named t0, t1…). */
export function standInRun(sessions: string[] = ["s1"]) {
  let end: (o: TaskOutcome[]) => void = () => {};
  const aborted: unknown[] = [];
  const outcomes = new Promise<TaskOutcome[]>((r) => (end = r));
  const run: CallRun = {
    tasks: sessions.map((sessionId, i) => ({ sessionId, name: `t${i}` })) as never,
    windows: new CallWindows(
      sessions.map((sessionId, i) => ({ name: `t${i}`, sessionId, timeoutSec: 60 })),
      5,
    ),
    lastActive: 0,
    startedAt: Date.now(),
    listeners: new Set(),
    outcomes,
    settled: outcomes,
    abort: (reason) => {
      aborted.push(reason);
      end([]);
    },
  };
  return { run, aborted, end: (o: TaskOutcome[] = []) => end(o) };
}
