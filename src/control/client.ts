// Talking to an owner: find which live owner holds a session, and send it one control request.
import * as net from "node:net";
import { ownerOf as runOwnerOf, type SessionStore } from "../core/store/store-types.ts";
import type { ControlReply, ControlRequest } from "./protocol.ts";
import { liveOwners, type OwnerRecord } from "./registry.ts";
import type { WatchMessage } from "./watch.ts";

export function request(socket: string, req: ControlRequest, timeoutMs?: number): Promise<ControlReply> {
  return new Promise((resolve) => {
    const sock = net.createConnection(socket);
    let buf = "";
    let done = false;
    const finish = (r: ControlReply) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = timeoutMs
      ? setTimeout(
          () => finish({ ok: false, reason: `no answer from the owner within ${timeoutMs / 1000}s` }),
          timeoutMs,
        )
      : undefined;
    sock.setEncoding("utf8");
    sock.on("connect", () => sock.write(`${JSON.stringify(req)}\n`));
    sock.on("data", (c: string) => {
      buf += c;
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      try {
        finish(JSON.parse(buf.slice(0, nl)) as ControlReply);
      } catch {
        finish({ ok: false, reason: "garbled answer from the owner" });
      }
    });
    sock.on("error", (err) =>
      finish({ ok: false, reason: `cannot reach the owner (${(err as NodeJS.ErrnoException).code ?? err.message})` }),
    );
    sock.on("close", () => finish({ ok: false, reason: "the owner closed the connection without answering" }));
  });
}

/** The live owner still responsible for a session (queued or running), if any. */
export function ownerOf(owners: OwnerRecord[], sessionId: string): OwnerRecord | null {
  return owners.find((o) => o.sessions.includes(sessionId)) ?? null;
}

export type SessionState = { kind: "unknown" } | { kind: "active"; owner: OwnerRecord | null } | { kind: "done" };

/** Where sessions are looked up: the store, and the folder beside it where their owners keep their records. */
export type SessionRecords = { store: SessionStore; dataDir: string };

/**
 * Where a session stands for wait/steer/cancel: still in the hands of a live owner (queued or running), done
 * (its last run has a terminal status), or unknown. A run recorded as running or queued whose owner is gone is
 * done: the store marks it interrupted, or never started, when opened (recoverStale).
 */
export function sessionState({ store, dataDir }: SessionRecords, id: string): SessionState {
  const owners = liveOwners(dataDir);
  const owner = ownerOf(owners, id);
  if (owner) return { kind: "active", owner };
  const s = store.getSession(id);
  const last = s?.runs[s.runs.length - 1];
  if (!last) return { kind: "unknown" };
  if (last.status !== "running" && last.status !== "queued") return { kind: "done" };
  const runOwner = runOwnerOf(last);
  // The store's own judgement of owners (the one its startRun and recoverStale go by).
  if (runOwner !== null && store.ownerAlive(runOwner))
    return { kind: "active", owner: owners.find((o) => o.pid === last.ownerPid) ?? null };
  store.recoverStale();
  return { kind: "done" };
}

/**
 * Follows a session through its owner (`watch`): `onMessage` gets each message; resolves when the stream ends —
 * `ended` (the task is over), `refused` (an owner that does not serve watch), neither (the owner went away) — or
 * when `close()` is called.
 */
export function watch(
  socket: string,
  sessionId: string,
  onMessage: (m: WatchMessage) => void,
): { done: Promise<{ ended: boolean; refused?: string }>; close(): void } {
  const sock = net.createConnection(socket);
  let ended = false;
  let refused: string | undefined;
  let buf = "";
  sock.setEncoding("utf8");
  sock.on("connect", () => sock.write(`${JSON.stringify({ op: "watch", sessionId } satisfies ControlRequest)}\n`));
  sock.on("data", (c: string) => {
    buf += c;
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let m: WatchMessage | { ok: false; reason: string };
      try {
        m = JSON.parse(line);
      } catch {
        continue;
      }
      if ("ok" in m)
        refused = m.reason; // an owner that does not know `watch` (an older build)
      else if (m.type === "end") ended = true;
      else onMessage(m);
    }
  });
  // An owner that is gone ends the stream without "end": the caller looks at the store and registry again.
  sock.on("error", () => {});
  const done = new Promise<{ ended: boolean; refused?: string }>((resolve) =>
    sock.on("close", () => resolve({ ended, refused })),
  );
  return { done, close: () => sock.destroy() };
}
