// Gemini CLI as the child: `gemini -o stream-json -p <task>`. Its stream: init (session id, model), user and
// assistant `message` lines (assistant text as deltas), tool_use / tool_result, and a final `result` with the
// run's token stats (no cost). A model turn is not marked: it ends at its tool results or at the result.
import type { ChildEvent } from "../../types.ts";
import { argsText, assistant, bareModel, num, jsonLines, resultText, withLeadingInstructions } from "./parse-util.ts";
import type { EventParser, ForeignRuntime } from "./types.ts";

function geminiParser(): EventParser {
  let turn: { text: string; toolCalls: { id: string; name: string; args: string }[] } | null = null;
  let model: string | undefined;
  const names = new Map<string, string>();
  const open = (out: ChildEvent[]) => {
    if (turn) return turn;
    out.push({ type: "turn_start" });
    return (turn = { text: "", toolCalls: [] });
  };
  const flush = (out: ChildEvent[]) => {
    if (!turn) return;
    out.push(assistant(turn.text, {}, { model, provider: "google", toolCalls: turn.toolCalls }));
    turn = null;
  };
  return {
    parse: jsonLines((ev, out) => {
      switch (ev.type) {
        case "init":
          model = ev.model;
          out.push({ type: "session", id: String(ev.session_id ?? "") });
          break;
        case "message":
          if (ev.role !== "assistant") break;
          open(out).text += String(ev.content ?? "");
          out.push({ type: "text", delta: String(ev.content ?? "") });
          break;
        case "tool_use": {
          const call = {
            id: String(ev.tool_id ?? ""),
            name: String(ev.tool_name ?? "tool"),
            args: argsText(ev.parameters),
          };
          names.set(call.id, call.name);
          open(out).toolCalls.push(call);
          out.push({ type: "tool_start", ...call });
          break;
        }
        case "tool_result": {
          flush(out);
          const id = String(ev.tool_id ?? "");
          out.push({
            type: "tool_end",
            id,
            name: names.get(id) ?? "tool",
            isError: ev.status !== "success",
            result: resultText(ev.output ?? ev.error?.message ?? ""),
          });
          break;
        }
        case "result": {
          flush(out);
          const s = ev.stats ?? {};
          if (ev.status !== "success")
            out.push(
              assistant(
                "",
                {},
                { stopReason: "error", errorMessage: `Gemini CLI: ${ev.error?.message ?? ev.status ?? "failed"}` },
              ),
            );
          const cached = num(s.cached);
          out.push(
            {
              type: "totals",
              usage: {
                input: Math.max(0, num(s.input_tokens) - cached),
                output: num(s.output_tokens),
                cacheRead: cached,
                cacheWrite: 0,
                cost: 0,
              },
            },
            { type: "agent_end" },
          );
          break;
        }
      }
    }),
  };
}

export const gemini: ForeignRuntime = {
  name: "gemini",
  bin: "gemini",
  npmPackage: "@google/gemini-cli",
  notes: [
    "runs on Gemini CLI: no steering, no subagent_finalize, resume replays the transcript, no cost reported (tokens only)",
  ],
  ownConfig: () => ["~/.gemini"],
  build(req) {
    const warnings: string[] = [];
    // --yolo: no approval can be answered headless. It has no flag to add to its system prompt (GEMINI_SYSTEM_MD
    // replaces it whole), so the agent's prompt leads the task.
    const args = ["-o", "stream-json", "--yolo"];
    const model = bareModel(req.model, warnings, "gemini");
    if (model) args.push("-m", model);
    args.push("-p", withLeadingInstructions(req.systemPrompt, req.prompt));
    return { args, env: {}, stdin: "", files: [], warnings };
  },
  parser: geminiParser,
};
