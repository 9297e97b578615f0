// `watch`: the one control request that keeps its connection open (subagents attach, the /subagents fleet view).
// The owner streams the task's window as it changes (at most 10 times a second), one readable line per event,
// and `end` once the task is no longer its own; the watcher then reads the recorded end from the store.
import type * as net from "node:net";
import type { WindowView } from "../ui/windows.ts";

export type WatchMessage =
  | { type: "view"; view: WindowView }
  | { type: "queued" }
  | { type: "line"; text: string }
  | { type: "end" };

export type WatchSource = {
  /** The task's window now; "queued" before it starts; null once it is not this owner's (ended). */
  view(id: string): WindowView | "queued" | null;
  /** Calls `fn` with each event line of the task; returns the unsubscribe. */
  listen(id: string, fn: (m: WatchMessage) => void): () => void;
};

const TICK_MS = 100;
/** A watcher that stops reading is dropped rather than buffered without end. */
const MAX_BACKLOG = 1024 * 1024;

export function serveWatch(sock: net.Socket, id: string, src: WatchSource): void {
  let last = "";
  const send = (m: WatchMessage) => {
    if (sock.writableLength > MAX_BACKLOG) return sock.destroy();
    sock.write(`${JSON.stringify(m)}\n`);
  };
  const tick = () => {
    const v = src.view(id);
    if (v === null) {
      stop();
      sock.end(`${JSON.stringify({ type: "end" })}\n`);
      return;
    }
    const msg: WatchMessage = v === "queued" ? { type: "queued" } : { type: "view", view: v };
    const text = JSON.stringify(msg);
    if (text === last) return;
    last = text;
    send(msg);
  };
  const unlisten = src.listen(id, send);
  // Watching must not keep the owner alive: its own work decides when it exits.
  const timer = setInterval(tick, TICK_MS);
  timer.unref?.();
  const stop = () => {
    clearInterval(timer);
    unlisten();
  };
  sock.on("close", stop);
  tick();
}
