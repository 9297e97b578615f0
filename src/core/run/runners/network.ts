// A sandboxed (or container) child's network (subagents.sandboxNetwork):
//  - "all": the host network, as before;
//  - "model" (the default): a network namespace of its own — a loopback, no route — and one way out, the owner's
//    proxy (src/host/net-proxy.ts) on a Unix socket bind-mounted into the sandbox, which lets through the child's
//    model provider (its base URL's host and port) and subagents.sandboxAllowHosts, and answers 403 to anything
//    else, counting it for the task's warnings;
//  - "none": the same, with only the model: the allow list is not used (the child's tools, MCP servers and
//    commands reach nothing but the model's endpoint).
// A connection that does not use the proxy (bash's /dev/tcp, a program ignoring HTTP(S)_PROXY) has no route and
// fails at once. Inside, a forwarder (src/host/net-forward.ts) turns the socket into an HTTP proxy on 127.0.0.1 and
// mirrors allowed loopback endpoints (a local model); for our own pi it runs inside pi's process, otherwise a
// `net-forward` role of our executable starts the child.
import type { NetProxy } from "../../host.ts";
import type { PlaceRequest } from "./types.ts";
import { listed } from "../../string-list.ts";

/** "https://host:port/path" → "host:port" (the scheme's port when none is written); null when not a URL. */
export function endpointOf(url: string): string | null {
  const m = /^(https?):\/\/(?:[^@/]*@)?(\[[0-9a-fA-F:.]+\]|[^:/?#]+)(?::(\d+))?/i.exec(url.trim());
  if (!m) return null;
  return `${m[2].toLowerCase()}:${m[3] ?? (m[1].toLowerCase() === "https" ? 443 : 80)}`;
}

export type AllowRule = { host: string; port?: number; wildcard: boolean };

/** "host", "host:port", "*.example.com[:port]", "[::1]:port" → rules; entries that do not parse are left out. */
export function parseAllow(patterns: string[]): AllowRule[] {
  const out: AllowRule[] = [];
  for (const raw of patterns) {
    const p = raw.trim().toLowerCase();
    const m = /^(\*\.)?(?:\[([0-9a-f:.]+)\]|([^:[\]/\s*]+))(?::(\d{1,5}))?$/.exec(p);
    if (!m) continue;
    out.push({ host: m[2] ?? m[3], port: m[4] ? Number(m[4]) : undefined, wildcard: !!m[1] });
  }
  return out;
}

/** Whether a destination is allowed: the exact host (any port unless one is given), or a subdomain of a "*." rule. */
export function allows(rules: AllowRule[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return rules.some(
    (r) => (r.port === undefined || r.port === port) && (r.wildcard ? h.endsWith(`.${r.host}`) : h === r.host),
  );
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1)$/;

/** Allowed loopback endpoints with a port (a local model): mirrored at the same address inside the sandbox. */
export function loopbackMirrors(rules: AllowRule[]): string[] {
  return [
    ...new Set(
      rules
        .filter((r) => !r.wildcard && r.port !== undefined && LOOPBACK.test(r.host))
        .map((r) => (r.host.includes(":") ? `[${r.host}]:${r.port}` : `${r.host}:${r.port}`)),
    ),
  ];
}

export type ClosedNetwork = {
  argv: string[];
  env: Record<string, string>;
  /** The socket to bind into the sandbox or container (same path inside). */
  socket: string;
  proxy: NetProxy;
};

let serial = 0;

/**
 * Starts the owner's proxy for this child and prepares its command; null when the network stays open ("all", or
 * no sandbox); a string is why it cannot be closed (nothing was started).
 */
export async function closeNetwork(
  req: PlaceRequest,
  argv: string[],
  env: Record<string, string>,
): Promise<ClosedNetwork | string | null> {
  if (req.settings.sandboxNetwork === "all") return null;
  if (!req.host.netProxy)
    return `This host cannot run the sandbox's network proxy. Set subagents.sandboxNetwork to "all" to give sandboxed children the host network. Nothing was run.`;
  const ours = env.SUBAGENTS_ROLE === "pi";
  if (!ours && !req.network?.forwarder?.length) {
    return `A sandboxed child with a closed network needs the subagents executable to forward its connections, and this child is not started from it (${argv[0] ?? "?"}). Run the subagents executable, or set subagents.sandboxNetwork to "all" (the host network). Nothing was run.`;
  }
  const rules = parseAllow(req.network?.allow ?? []);
  // Short: a Unix socket's path has at most 107 bytes.
  const socket = `${req.host.privateTempDir()}/n${req.host.pid.toString(36)}-${(++serial).toString(36)}.sock`;
  const proxy = await req.host.netProxy({ socketPath: socket, allow: (h, p) => allows(rules, h, p) });
  const netEnv: Record<string, string> = {
    ...env,
    SUBAGENTS_NET_SOCK: socket,
    SUBAGENTS_NET_MIRROR: loopbackMirrors(rules).join(" "),
  };
  // Proxy variables of the owner's own would point outside, where nothing is reachable: the forwarder sets them.
  for (const k of [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
    "ALL_PROXY",
    "all_proxy",
  ])
    delete netEnv[k];
  if (ours) return { argv, env: netEnv, socket, proxy };
  return {
    argv: [...req.network!.forwarder!, ...argv],
    env: { ...netEnv, SUBAGENTS_ROLE: "net-forward" },
    socket,
    proxy,
  };
}

/** The task's warning for what the proxy refused: each destination once, with how often it was asked for. */
export function refusedWarning(refused: Map<string, number> | undefined): string | null {
  if (!refused?.size) return null;
  const list = [...refused].sort((a, b) => b[1] - a[1]);
  const total = list.reduce((n, [, c]) => n + c, 0);
  const shown = listed(
    list.map(([h, c]) => `${h} (${c}×)`),
    8,
  );
  return `sandbox network: refused ${total} connection${total === 1 ? "" : "s"} to ${shown} — not the child's model nor in subagents.sandboxAllowHosts`;
}
