// Probes stdio MCP servers the way pi 1.x's first prompt waits for them: start the server, send `initialize`, and
// see whether it answers within pi's start-up wait. Run by the owner once per call (results for servers that
// answered are kept for a few minutes), so a hung server costs one wait per call instead of one per child.
import { spawn } from "node:child_process";
import type { McpServer } from "../core/run/launch/mcp-config.ts";

/** pi 1.5.2 waits this long at the first prompt for servers with `direct` tools. */
export const PI_MCP_START_WAIT_MS = 10_000;
const ALIVE_FOR_MS = 5 * 60_000;

function expand(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\{(\w+)\}/g, (_, name: string) => env[name] ?? "").replace(/^~\//, `${env.HOME ?? ""}/`);
}

/** Whether one stdio server answers `initialize` within waitMs. Its whole process group is stopped afterwards. */
export function probeStdioServer(
  server: McpServer,
  opts: { cwd: string; env: Record<string, string | undefined>; waitMs?: number },
): Promise<boolean> {
  const stdio = server.stdio;
  // Only stdio servers are probed, and not one whose env runs a command (`!cmd`): we do not run those, and
  // without them the server may not start — it is taken to be alive.
  if (!stdio || Object.values(stdio.env ?? {}).some((v) => typeof v === "string" && v.startsWith("!")))
    return Promise.resolve(true);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.env)) if (v !== undefined) env[k] = v;
  for (const [k, v] of Object.entries(stdio.env ?? {})) if (typeof v === "string") env[k] = expand(v, opts.env);
  return new Promise((resolve) => {
    let done = false;
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(
        expand(stdio.command, opts.env),
        stdio.args.map((a) => expand(a, opts.env)),
        {
          cwd: stdio.cwd ? expand(stdio.cwd, opts.env) : opts.cwd,
          env,
          stdio: ["pipe", "pipe", "ignore"],
          detached: true,
        },
      );
    } catch {
      return resolve(false);
    }
    const finish = (alive: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.stdin?.end();
      const kill = (sig: NodeJS.Signals) => {
        try {
          if (child.pid) process.kill(-child.pid, sig);
        } catch {
          // already gone
        }
      };
      kill("SIGTERM");
      setTimeout(() => kill("SIGKILL"), 1000).unref();
      resolve(alive);
    };
    const timer = setTimeout(() => finish(false), opts.waitMs ?? PI_MCP_START_WAIT_MS);
    child.on("error", () => finish(false));
    child.on("exit", () => finish(false));
    let buf = "";
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      buf += chunk;
      if (/"id"\s*:\s*1\b/.test(buf) && /"result"/.test(buf)) finish(true);
    });
    child.stdin?.on("error", () => {});
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "subagents-probe", version: "1" },
      },
    };
    child.stdin?.write(`${JSON.stringify(init)}\n`);
  });
}

/** A probe that remembers servers that answered (by their command line) for a few minutes. */
export function createMcpProbe(env: Record<string, string | undefined>, waitMs = PI_MCP_START_WAIT_MS) {
  const alive = new Map<string, number>();
  return async (servers: McpServer[], cwd: string): Promise<string[]> => {
    const results = await Promise.all(
      servers.map(async (s) => {
        const key = JSON.stringify([s.stdio, cwd]);
        if ((alive.get(key) ?? 0) > Date.now()) return null;
        const ok = await probeStdioServer(s, { cwd, env, waitMs });
        if (ok) alive.set(key, Date.now() + ALIVE_FOR_MS);
        return ok ? null : s.name;
      }),
    );
    return results.filter((n): n is string => n !== null);
  };
}
