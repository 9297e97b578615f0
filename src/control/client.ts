// Talking to an owner: find which live owner holds a session, and send it one control request.
import * as net from "node:net";
import type { SessionStore } from "../core/store/store-types.ts";
import type { ControlReply, ControlRequest } from "./protocol.ts";
import type { OwnerRecord } from "./registry.ts";

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
    const timer = timeoutMs ? setTimeout(() => finish({ ok: false, reason: `no answer from the owner within ${timeoutMs / 1000}s` }), timeoutMs) : undefined;
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
    sock.on("error", (err) => finish({ ok: false, reason: `cannot reach the owner (${(err as NodeJS.ErrnoException).code ?? err.message})` }));
    sock.on("close", () => finish({ ok: false, reason: "the owner closed the connection without answering" }));
  });
}

/** The live owner still responsible for a session (queued or running), if any. */
export function ownerOf(owners: OwnerRecord[], sessionId: string): OwnerRecord | null {
  return owners.find((o) => o.sessions.includes(sessionId)) ?? null;
}

export type SessionState = { kind: "unknown" } | { kind: "active"; owner: OwnerRecord | null } | { kind: "done" };

/**
 * Where a session stands for wait/steer/cancel: still in the hands of a live owner (queued or running), done
 * (its last run has a terminal status), or unknown. A run recorded as running whose owner is gone is done:
 * the store marks it interrupted when opened (recoverStale).
 */
export function sessionState(store: SessionStore, owners: OwnerRecord[], id: string, ownerAlive: (pid: number) => boolean): SessionState {
  const owner = ownerOf(owners, id);
  if (owner) return { kind: "active", owner };
  const s = store.getSession(id);
  const last = s?.runs[s.runs.length - 1];
  if (!last) return { kind: "unknown" };
  if (last.status !== "running") return { kind: "done" };
  if (last.ownerPid !== null && ownerAlive(last.ownerPid)) return { kind: "active", owner: owners.find((o) => o.pid === last.ownerPid) ?? null };
  store.recoverStale(ownerAlive);
  return { kind: "done" };
}
