// The host side of a sandboxed child's network (src/core/run/runners/network.ts): an HTTP proxy on a Unix socket
// that only the child's sandbox or container sees (bind-mounted in). Inside, the child's network namespace has a
// loopback and nothing else; its forwarder (net-forward.ts) relays every connection here. This proxy speaks the two
// forms clients use with HTTP(S)_PROXY — `CONNECT host:port` (TLS passes through untouched: nothing is decrypted)
// and an absolute-URI request (`GET http://host:port/path`) — and opens the connection only when the allow list
// says yes. Anything else gets a 403 at once and is counted per destination, so the owner can report it.
// It runs in the owner's process (node:net, Bun and Node alike): it ends with the owner, and the owner closes it
// after each child on every end path.
import * as fs from "node:fs";
import * as net from "node:net";
import type { NetProxy, NetProxySpec } from "../core/host.ts";

const MAX_HEAD = 16 * 1024;
// Hop-by-hop and proxy headers never go upstream; `Connection: close` is added so one client connection is one
// destination (a second request on it cannot reach another host).
const DROPPED = /^(proxy-connection|proxy-authorization|connection|keep-alive)\s*:/i;

/** "host:port" (or "[v6]:port") → its parts; null when malformed. */
export function splitHostPort(s: string, defaultPort?: number): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]/\s]+))(?::(\d{1,5}))?$/.exec(s);
  if (!m) return null;
  const port = m[3] ? Number(m[3]) : defaultPort;
  if (!port || port > 65535) return null;
  return { host: (m[1] ?? m[2]).toLowerCase(), port };
}

type Target = { host: string; port: number; connect: boolean; head?: Buffer };

/** The destination of a proxy request head, or why it cannot be served (a status and a reason). */
export function proxyTarget(head: string): Target | { status: number; reason: string } {
  const lines = head.split("\r\n");
  const [method, target, version] = (lines[0] ?? "").split(" ");
  if (!method || !target || !version?.startsWith("HTTP/")) return { status: 400, reason: "not an HTTP request" };
  if (method.toUpperCase() === "CONNECT") {
    const hp = splitHostPort(target);
    return hp ? { ...hp, connect: true } : { status: 400, reason: `bad CONNECT target ${target.slice(0, 80)}` };
  }
  const m = /^http:\/\/([^/?#]+)([^#]*)$/i.exec(target);
  if (!m) return { status: 400, reason: "only CONNECT and absolute http:// requests go through this proxy" };
  const hp = splitHostPort(m[1].replace(/^[^@]*@/, ""), 80);
  if (!hp) return { status: 400, reason: `bad host ${m[1].slice(0, 80)}` };
  const rest = lines.slice(1).filter((l) => l && !DROPPED.test(l));
  const out = [`${method} ${m[2] || "/"} ${version}`, ...rest, "Connection: close", "", ""].join("\r\n");
  return { ...hp, connect: false, head: Buffer.from(out, "latin1") };
}

const label = (host: string, port: number) => (host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);

function answer(sock: net.Socket, status: number, text: string): void {
  const reason =
    status === 403
      ? "Forbidden"
      : status === 502
        ? "Bad Gateway"
        : status === 431
          ? "Request Header Fields Too Large"
          : "Bad Request";
  const body = `subagents sandbox: ${text}\n`;
  sock.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export async function startNetProxy(spec: NetProxySpec): Promise<NetProxy> {
  const refused = new Map<string, number>();
  const open = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    open.add(s);
    s.on("close", () => open.delete(s));
    s.on("error", () => s.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buf.length > MAX_HEAD) answer(client, 431, "request head too large");
        return;
      }
      client.off("data", onData);
      client.pause();
      const t = proxyTarget(buf.subarray(0, end).toString("latin1"));
      const rest = buf.subarray(end + 4);
      if ("status" in t) return answer(client, t.status, t.reason);
      if (!spec.allow(t.host, t.port)) {
        const key = label(t.host, t.port);
        refused.set(key, (refused.get(key) ?? 0) + 1);
        return answer(client, 403, `${key} is not allowed (the child's model and subagents.sandboxAllowHosts are)`);
      }
      const up = net.connect({ host: t.host, port: t.port });
      track(up);
      up.once("error", (err) => {
        if (!client.destroyed) answer(client, 502, `${label(t.host, t.port)}: ${(err as Error).message}`);
      });
      up.once("connect", () => {
        if (t.connect) client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        else up.write(t.head!);
        if (rest.length) up.write(rest);
        client.pipe(up);
        up.pipe(client);
        client.resume();
      });
      client.once("close", () => up.destroy());
      up.once("close", () => client.end());
    };
    client.on("data", onData);
  });
  fs.rmSync(spec.socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(spec.socketPath, () => resolve());
  });
  // Only this user may connect (the socket's folder is private too).
  fs.chmodSync(spec.socketPath, 0o600);
  let closed: Promise<void> | null = null;
  return {
    socketPath: spec.socketPath,
    refused: () => new Map(refused),
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }).finally(() => fs.rmSync(spec.socketPath, { force: true }))),
  };
}
