// Claude Code as the child: `claude -p --output-format stream-json --verbose`, the task on stdin.
// Its stream: system/init (session id), one `assistant` line per content block of a message (same message id),
// `user` lines carrying tool results, and a final `result` with the run's totals and cost.
import type { ChildEvent } from "../../types.ts";
import { argsText, assistant, num, jsonLines, resultText } from "./parse-util.ts";
import type { EventParser, ForeignRuntime, ToolRules } from "./types.ts";

type Pending = {
  id: string;
  text: string;
  toolCalls: { id: string; name: string; args: string }[];
  input: number;
  cacheRead: number;
  cacheWrite: number;
  model?: string;
};

function claudeParser(): EventParser {
  let pending: Pending | null = null;
  const toolNames = new Map<string, string>();
  const flush = (out: ChildEvent[]) => {
    if (!pending) return;
    const p = pending;
    pending = null;
    // Output tokens of a message are only right in the final totals (its stream lines carry the first count).
    out.push(
      assistant(
        p.text,
        { input: p.input, cacheRead: p.cacheRead, cacheWrite: p.cacheWrite },
        { model: p.model, provider: "anthropic", toolCalls: p.toolCalls },
      ),
    );
  };
  return {
    parse: jsonLines((ev, out) => {
      switch (ev.type) {
        case "system":
          if (ev.subtype === "init") out.push({ type: "session", id: String(ev.session_id ?? "") });
          else if (ev.subtype === "api_retry") {
            out.push({
              type: "retry",
              attempt: num(ev.attempt),
              maxAttempts: num(ev.max_retries),
              delayMs: num(ev.retry_delay_ms),
              errorMessage: String(ev.error ?? ev.error_status ?? ""),
            });
          }
          return;
        case "assistant": {
          const m = ev.message ?? {};
          if (ev.parent_tool_use_id) return; // a sub-agent of its own: its turns are not this child's
          if (!pending || pending.id !== m.id) {
            flush(out);
            out.push({ type: "turn_start" });
            const u = m.usage ?? {};
            pending = {
              id: String(m.id ?? ""),
              text: "",
              toolCalls: [],
              input: num(u.input_tokens),
              cacheRead: num(u.cache_read_input_tokens),
              cacheWrite: num(u.cache_creation_input_tokens),
              model: m.model,
            };
          }
          for (const b of Array.isArray(m.content) ? m.content : []) {
            if (b?.type === "text" && typeof b.text === "string") {
              pending.text += b.text;
              out.push({ type: "text", delta: b.text });
            } else if (b?.type === "tool_use") {
              const call = { id: String(b.id), name: String(b.name), args: argsText(b.input) };
              toolNames.set(call.id, call.name);
              pending.toolCalls.push(call);
              out.push({ type: "tool_start", ...call });
            }
          }
          return;
        }
        case "user": {
          if (ev.parent_tool_use_id) return;
          flush(out);
          for (const b of Array.isArray(ev.message?.content) ? ev.message.content : []) {
            if (b?.type !== "tool_result") continue;
            const id = String(b.tool_use_id);
            const content = Array.isArray(b.content)
              ? b.content.map((c: any) => (typeof c?.text === "string" ? c.text : "")).join("")
              : b.content;
            out.push({
              type: "tool_end",
              id,
              name: toolNames.get(id) ?? "tool",
              isError: !!b.is_error,
              result: resultText(content),
            });
          }
          return;
        }
        case "result": {
          flush(out);
          const u = ev.usage ?? {};
          if (ev.is_error || (ev.subtype && ev.subtype !== "success")) {
            const why =
              typeof ev.result === "string" && ev.result
                ? ev.result
                : ev.subtype === "error_max_turns"
                  ? `reached its turn limit (${num(ev.num_turns)} turns)`
                  : String(ev.subtype ?? "error");
            out.push(assistant("", {}, { stopReason: "error", errorMessage: `Claude Code: ${why}` }));
          }
          // Its totals replace what the messages said (their output counts are the first streamed ones).
          out.push({
            type: "totals",
            usage: {
              input: num(u.input_tokens),
              output: num(u.output_tokens),
              cacheRead: num(u.cache_read_input_tokens),
              cacheWrite: num(u.cache_creation_input_tokens),
              cost: num(ev.total_cost_usd),
            },
            turns: num(ev.num_turns) || undefined,
          });
          out.push({ type: "agent_end" });
          return;
        }
        default:
          return;
      }
    }),
  };
}

/** pi's built-in tools as Claude Code names them (LS is gone from recent versions, which ignore the name). */
const CLAUDE_NAMES: Record<string, string[]> = {
  read: ["Read"],
  write: ["Write"],
  edit: ["Edit"],
  bash: ["Bash"],
  grep: ["Grep"],
  find: ["Glob"],
  ls: ["LS"],
};

/** The agent's tool list as Claude Code's flags: an allow list is `--tools` (its built-in tools), a deny list
 *  `--disallowedTools` (MCP tools too: both name them `mcp__server__tool`); what cannot be applied is said. */
export function claudeToolFlags(rules: ToolRules): { args: string[]; warnings: string[] } {
  if (rules.none) return { args: ["--tools", ""], warnings: [] };
  const names = rules.allow ?? rules.deny ?? [];
  const builtins = names.flatMap((n) => CLAUDE_NAMES[n] ?? []);
  const mcp = names.filter((n) => n.startsWith("mcp__"));
  const other = names.filter((n) => !CLAUDE_NAMES[n] && !n.startsWith("mcp__"));
  const warnings: string[] = [];
  if (other.length)
    warnings.push(
      `Claude Code has no ${other.join(", ")}: ${rules.allow ? "left out of this run" : "nothing to deny"}`,
    );
  if (rules.allow) {
    if (mcp.length)
      warnings.push(
        `${mcp.join(", ")}: Claude Code's MCP servers come from its own configuration; the allow list does not limit them`,
      );
    return { args: ["--tools", builtins.join(",")], warnings };
  }
  const denied = [...builtins, ...mcp];
  return { args: denied.length ? ["--disallowedTools", denied.join(",")] : [], warnings };
}

export const claudeCode: ForeignRuntime = {
  name: "claude-code",
  appliesTools: true,
  bin: "claude",
  npmPackage: "@anthropic-ai/claude-code",
  notes: ["runs on Claude Code: no steering, no subagent_finalize, resume replays the transcript"],
  ownConfig: (env) => [env.CLAUDE_CONFIG_DIR ?? "~/.claude", "~/.claude.json"],
  build(req) {
    // Headless: nothing may stop to ask for a permission (there is no one to answer), as with a pi child.
    const args = ["-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions"];
    if (req.model) args.push("--model", req.model);
    if (req.systemPrompt) args.push("--append-system-prompt", req.systemPrompt);
    if (req.maxTurns) args.push("--max-turns", String(req.maxTurns));
    const tools = req.tools ? claudeToolFlags(req.tools) : { args: [], warnings: [] };
    args.push(...tools.args);
    return { args, env: {}, stdin: req.prompt, files: [], warnings: tools.warnings };
  },
  parser: claudeParser,
};
