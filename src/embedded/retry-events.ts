// pi tells a retry of a failed model request (`auto_retry_start`: attempt, attempts allowed, the wait, the error) to
// its own session listeners only, not to extensions; so a child would report the failed attempt and nothing of the
// retry, and its window read `✗ 500 … ×3` instead of `↻ retry 2/3 in 4s — 500 …`. The embedded pi (and a user's pi
// compiled by us) hands each such event to the child extension too (child-extension/extension.ts listens), as it
// is emitted. A pi without this shape only loses the retry lines: the child runs as before.
import { RETRY_KEY } from "../child-extension/retries.ts";

const RETRY_EMIT = /this\._emit\((\{type:"auto_retry_start",[^{}]*\})\)/g;

/** Tells the child extension of each retry pi starts; null when the file has no such emit. */
export function hookRetryEvents(source: string): { source: string; sites: number } | null {
  let sites = 0;
  const hooked = source.replace(RETRY_EMIT, (_all, event: string) => {
    sites++;
    return `this._emit(((e)=>(globalThis[Symbol.for(${JSON.stringify(RETRY_KEY)})]?.(e),e))(${event}))`;
  });
  return sites ? { source: hooked, sites } : null;
}
