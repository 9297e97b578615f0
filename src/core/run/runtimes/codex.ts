// Codex CLI as the child: `codex exec --json -`, the task on stdin. Its stream: thread.started (session id),
// turn.started, item.started/item.completed (agent messages, commands, file changes, MCP calls) and
// turn.completed with the turn's token usage (no cost), or turn.failed.
import { argsText, assistant, bareModel, num, jsonLines, resultText } from "./parse-util.ts";
import type { EventParser, ForeignRuntime } from "./types.ts";

/** An item as a tool call: its name and arguments, or null for items that are not tool calls. */
function toolOf(item: Record<string, any>): { name: string; args: string } | null {
  switch (item.type) {
    case "command_execution":
      return { name: "bash", args: argsText({ command: item.command }) };
    case "file_change":
      return { name: "apply_patch", args: argsText({ changes: item.changes }) };
    case "mcp_tool_call":
      return { name: `${item.server ?? "mcp"}.${item.tool ?? "tool"}`, args: argsText(item.arguments ?? {}) };
    case "web_search":
      return { name: "web_search", args: argsText({ query: item.query }) };
    default:
      return null;
  }
}

function codexParser(): EventParser {
  const started = new Set<string>();
  const total = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0 };
  let lastError = "";
  return {
    parse: jsonLines((ev, out) => {
      switch (ev.type) {
        case "thread.started":
          out.push({ type: "session", id: String(ev.thread_id ?? "") });
          break;
        case "turn.started":
          out.push({ type: "turn_start" });
          break;
        case "item.started":
        case "item.completed": {
          const item = ev.item ?? {};
          const id = String(item.id ?? "");
          if (item.type === "agent_message" && ev.type === "item.completed") {
            out.push({ type: "text", delta: String(item.text ?? "") }, assistant(String(item.text ?? "")));
            break;
          }
          const tool = toolOf(item);
          if (!tool) break;
          if (!started.has(id)) {
            started.add(id);
            out.push({ type: "tool_start", id, ...tool });
          }
          if (ev.type === "item.completed") {
            const failed =
              item.status === "failed" || (typeof item.exit_code === "number" && item.exit_code !== 0) || !!item.error;
            const result = item.aggregated_output ?? item.result ?? item.error?.message ?? item.status ?? "";
            out.push({ type: "tool_end", id, name: tool.name, isError: failed, result: resultText(result) });
          }
          break;
        }
        case "turn.completed": {
          const u = ev.usage ?? {};
          // Codex counts cached input inside input_tokens; ours keeps them apart.
          total.cacheRead += num(u.cached_input_tokens);
          total.input += num(u.input_tokens) - num(u.cached_input_tokens);
          total.output += num(u.output_tokens);
          total.cacheWrite += num(u.cache_write_input_tokens);
          out.push({ type: "totals", usage: { ...total } }, { type: "agent_end" });
          break;
        }
        case "turn.failed":
          out.push(
            assistant(
              "",
              {},
              { stopReason: "error", errorMessage: `Codex: ${ev.error?.message ?? (lastError || "the turn failed")}` },
            ),
            { type: "agent_end" },
          );
          break;
        case "error":
          // Stream reconnects are reported as errors too; the turn's own end says whether it failed.
          lastError = String(ev.message ?? "");
          break;
      }
    }),
  };
}

export const codex: ForeignRuntime = {
  name: "codex",
  bin: "codex",
  npmPackage: "@openai/codex",
  notes: [
    "runs on Codex CLI: no steering, no subagent_finalize, resume replays the transcript, no cost reported (tokens only)",
  ],
  ownConfig: (env) => [env.CODEX_HOME ?? "~/.codex"],
  build(req) {
    const warnings: string[] = [];
    // No approvals can be answered headless; its own sandbox is not ours (ours is --sandbox, around the process).
    const args = ["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"];
    const model = bareModel(req.model, warnings, "codex");
    if (model) args.push("-m", model);
    // A TOML string (JSON's escapes are TOML's): added to its own instructions, as an agent file's would be.
    if (req.systemPrompt) args.push("-c", `developer_instructions=${JSON.stringify(req.systemPrompt)}`);
    args.push("-");
    return { args, env: {}, stdin: req.prompt, files: [], warnings };
  },
  parser: codexParser,
};
