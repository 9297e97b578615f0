// A background session's readable event log, `<data dir>/logs/<session>.log`: what `subagents logs ID [-f]`
// shows while nobody watches its window. One line per meaningful event, sanitized like everything we print.
import * as fs from "node:fs";
import * as path from "node:path";
import { statusLine } from "../../core/run/outcome-text.ts";
import type { TaskOutcome } from "../../core/run/task-types.ts";
import { sanitize } from "../../core/sanitize.ts";
import type { ChildEvent } from "../../core/types.ts";
import { eventLine } from "../../ui/event-line.ts";

export const sessionLogPath = (data: string, id: string) => path.join(data, "logs", `${id}.log`);

export function appendEvent(file: string, ev: ChildEvent): void {
  const line = eventLine(ev);
  if (line) append(file, line);
}

export function appendEnd(file: string, o: TaskOutcome): void {
  append(file, statusLine(o));
}

function append(file: string, line: string): void {
  try {
    fs.appendFileSync(file, `${new Date().toISOString().slice(11, 19)} ${sanitize(line)}\n`, { mode: 0o600 });
  } catch {
    // a log is a convenience: never let it stop a run
  }
}
