// doctor's `mcp` line: `subagents mcp` starts, answers `initialize` and lists its tools — what an MCP client
// (Claude Code, Codex, …) does first when it starts the server (docs/mcp.md).
import { spawnSync } from "node:child_process";
import type { Check } from "./checks.ts";
import { selfCommand } from "../self-command.ts";

const TIMEOUT_MS = 20_000;
const PROTOCOL = "2025-11-25";

export function mcpCheck(cwd: string): Check {
  const [cmd, ...args] = selfCommand();
  const lines = [
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: "subagents-doctor", version: "1" } },
    },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
  ];
  const r = spawnSync(cmd, [...args, "mcp"], {
    cwd,
    input: `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`,
    encoding: "utf8",
    timeout: TIMEOUT_MS,
  });
  const fix = "run `subagents mcp` in a terminal and read its error (it logs to stderr)";
  if (r.error || r.status !== 0) {
    const why = r.error?.message ?? (r.stderr.trim().split("\n").at(-1) || `exit ${r.status}`);
    return { name: "mcp", status: "fail", detail: `subagents mcp did not start: ${why}`, fix };
  }
  try {
    const replies = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { id?: number; result?: any });
    const init = replies.find((m) => m.id === 1)?.result;
    const tools = (replies.find((m) => m.id === 2)?.result?.tools ?? []) as { name: string }[];
    if (!init || !tools.length) throw new Error("no answer to initialize or tools/list");
    return {
      name: "mcp",
      status: "ok",
      detail: `subagents mcp answers (protocol ${init.protocolVersion}, ${tools.length} tools); add it to a client: docs/mcp.md`,
    };
  } catch (err) {
    return { name: "mcp", status: "fail", detail: `subagents mcp answered badly: ${(err as Error).message}`, fix };
  }
}
