// What `subagents prune` removes besides sessions: the per-session event logs of background runs
// (`<data dir>/logs/<id>.log`) of the sessions it deletes, and supervisor logs older than the cut-off whose
// supervisor is gone (a live one is still writing its log).
import * as fs from "node:fs";
import * as path from "node:path";
import { liveOwners } from "../../control/registry.ts";
import { sessionLogPath } from "../background/session-log.ts";

/** The event logs of these sessions that exist. */
export function sessionLogs(data: string, ids: string[]): string[] {
  return ids.map((id) => sessionLogPath(data, id)).filter((f) => fs.statSync(f, { throwIfNoEntry: false })?.isFile());
}

/** Supervisor logs last written before `before` whose supervisor is no longer running. */
export function staleSupervisorLogs(data: string, before: number | undefined): string[] {
  if (before === undefined) return [];
  const dir = path.join(data, "logs");
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => /^supervisor-.*\.log$/.test(n));
  } catch {
    return [];
  }
  const live = new Set(liveOwners(data).map((o) => o.log));
  return names
    .map((n) => path.join(dir, n))
    .filter((f) => !live.has(f) && (fs.statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) < before);
}
