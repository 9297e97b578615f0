// Checkpoints of a running child's messages into the store, at most every 2 s, so a transcript asked for
// meanwhile (another tool call, another process) shows what happened so far. Best effort: the final, complete
// write is the store's finishRun. Kept rare on purpose: many processes may share one database.
import type { Clock } from "../../host.ts";
import type { SessionStore } from "../../store/store-types.ts";
import type { RunState } from "./run-state.ts";
import { sanitizeMessage } from "./result.ts";

const CHECKPOINT_MS = 2000;

export function runCheckpoints(store: Pick<SessionStore, "checkpointRun">, clock: Clock, runId: number) {
  let written = 0;
  // Counted from the start: a child done within the first interval never writes a checkpoint.
  let last = clock.now();
  let pending: unknown = null;
  // The task alone (message 0) is in the run record already.
  const unchanged = (s: RunState) => s.droppedMessages > 0 || s.messages.length === written || s.messages.length < 2;
  const write = (s: RunState) => {
    pending = null;
    if (unchanged(s)) return;
    last = clock.now();
    try {
      store.checkpointRun(runId, s.messages.slice(written).map(sanitizeMessage), written);
      written = s.messages.length;
    } catch {
      // a busy or read-only database only delays the transcript until the run ends
    }
  };
  return {
    /** Called on every event; writes at most once per interval, with a trailing write for the last change. */
    update(s: RunState): void {
      if (pending !== null || unchanged(s)) return;
      // Trailing write: the message before a long tool call must not wait for the tool to finish.
      const wait = last + CHECKPOINT_MS - clock.now();
      if (wait > 0) pending = clock.setTimeout(() => write(s), wait);
      else write(s);
    },
    stop(): void {
      if (pending !== null) clock.clearTimeout(pending);
      pending = null;
    },
  };
}
