// The inside of a sandboxed child's network (src/core/run/runners/network.ts). The child has a network namespace
// of its own: a loopback, no route, nothing of the host. The owner's proxy (net-proxy.ts) is reachable only as a
// Unix socket bind-mounted into the sandbox; this forwarder makes it usable from inside:
//  - an HTTP proxy endpoint on 127.0.0.1 (a random port) that relays bytes to that socket unchanged, named in
//    HTTP(S)_PROXY for everything the child runs (pi's own fetch, curl, git, npm, MCP servers…);
//  - for allowed loopback destinations (a local model at 127.0.0.1:PORT), a listener at the same address inside
//    that tunnels each connection there through the proxy (CONNECT), so their URLs work unchanged, even from a
//    program that ignores proxy variables.
// It runs in the child's own process (the embedded pi role starts it before pi loads: no extra process, nothing to
// stop) or, for a child that is not our pi, in a small `net-forward` role of our executable that starts the child.
// Every listener and socket is unref'd: the forwarder never keeps a finished child alive.
import * as net from "node:net";

export const NET_SOCK_ENV = "SUBAGENTS_NET_SOCK";
export const NET_MIRROR_ENV = "SUBAGENTS_NET_MIRROR";
/** The proxy URL the forwarder put in the proxy variables (so pi can tell them from a user's proxy). */
export const NET_PROXY_ENV = "SUBAGENTS_NET_PROXY";
const PROXY_VARS = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"];

function relay(a: net.Socket, b: net.Socket): void {
  a.on("error", () => b.destroy());
  b.on("error", () => a.destroy());
  a.on("close", () => b.destroy());
  b.on("close", () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

function listen(server: net.Server, host: string, port: number): Promise<number | null> {
  return new Promise((resolve) => {
    server.once("error", () => resolve(null));
    server.listen({ host, port, exclusive: true }, () => {
      server.unref();
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

function tunnel(sock: string, target: string): (client: net.Socket) => void {
  return (client) => {
    client.unref();
    client.pause();
    const up = net.connect(sock);
    up.unref();
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      up.off("data", onData);
      if (!/^HTTP\/1\.[01] 200/.test(head.toString("latin1", 0, 16))) {
        client.destroy();
        up.destroy();
        return;
      }
      const rest = head.subarray(end + 4);
      if (rest.length) client.write(rest);
      relay(client, up);
      client.resume();
    };
    up.on("data", onData);
    up.on("error", () => client.destroy());
    client.on("error", () => up.destroy());
    up.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  };
}

/** Starts the forwarder from SUBAGENTS_NET_SOCK / SUBAGENTS_NET_MIRROR and points the proxy variables at it. */
export async function startForwarder(env: Record<string, string | undefined> = process.env): Promise<string | null> {
  const sock = env[NET_SOCK_ENV];
  if (!sock) return null;
  const mirrors = (env[NET_MIRROR_ENV] ?? "").split(/\s+/).filter(Boolean);
  delete env[NET_SOCK_ENV];
  delete env[NET_MIRROR_ENV];
  const proxy = net.createServer((client) => {
    client.unref();
    const up = net.connect(sock);
    up.unref();
    relay(client, up);
  });
  const listening: Promise<unknown>[] = [listen(proxy, "127.0.0.1", 0)];
  for (const m of mirrors) {
    const i = m.lastIndexOf(":");
    const host = m.slice(0, i).replace(/^\[|\]$/g, "");
    const port = Number(m.slice(i + 1));
    // "localhost" may resolve to either loopback address inside: listen on both.
    const addrs = host === "localhost" ? ["127.0.0.1", "::1"] : [host];
    for (const a of addrs) listening.push(listen(net.createServer(tunnel(sock, m)), a, port));
  }
  const [port] = (await Promise.all(listening)) as (number | null)[];
  if (!port) return null;
  const url = `http://127.0.0.1:${port}`;
  for (const v of PROXY_VARS) env[v] = url;
  // Everything goes through the proxy, loopback included: a refused destination is then counted, not only refused.
  delete env.NO_PROXY;
  delete env.no_proxy;
  env[NET_PROXY_ENV] = url;
  return url;
}
