// opencode as the child: `opencode run --format json <task>`. Its stream: step_start / text / tool_use /
// step_finish parts of its session; step_finish carries the step's tokens and cost, an `error` line a failure.
import { argsText, assistant, num, jsonLines, resultText, withLeadingInstructions } from "./parse-util.ts";
import type { EventParser, ForeignRuntime } from "./types.ts";

function opencodeParser(): EventParser {
  let step: { text: string; toolCalls: { id: string; name: string; args: string }[] } | null = null;
  let sawSession = false;
  let failed = false;
  return {
    // Its stream has no last event: a clean exit after its steps is the end of the run.
    end: (code) => (code === 0 && !failed ? [{ type: "agent_end" }] : []),
    parse: jsonLines((ev, out) => {
      if (!sawSession && ev.sessionID) {
        sawSession = true;
        out.push({ type: "session", id: String(ev.sessionID) });
      }
      const part = ev.part ?? {};
      switch (ev.type) {
        case "step_start":
          step = { text: "", toolCalls: [] };
          out.push({ type: "turn_start" });
          break;
        case "text":
          if (step) step.text += String(part.text ?? "");
          out.push({ type: "text", delta: String(part.text ?? "") });
          break;
        case "tool_use": {
          const st = part.state ?? {};
          const call = {
            id: String(part.callID ?? part.id ?? ""),
            name: String(part.tool ?? "tool"),
            args: argsText(st.input),
          };
          step?.toolCalls.push(call);
          out.push({ type: "tool_start", ...call });
          if (st.status === "completed" || st.status === "error")
            out.push({
              type: "tool_end",
              id: call.id,
              name: call.name,
              isError: st.status === "error",
              result: resultText(st.output ?? st.error ?? ""),
            });
          break;
        }
        case "step_finish": {
          const t = part.tokens ?? {};
          out.push(
            assistant(
              step?.text ?? "",
              {
                input: num(t.input),
                output: num(t.output) + num(t.reasoning),
                cacheRead: num(t.cache?.read),
                cacheWrite: num(t.cache?.write),
                cost: num(part.cost),
              },
              { toolCalls: step?.toolCalls ?? [] },
            ),
          );
          step = null;
          break;
        }
        case "error": {
          const e = ev.error ?? {};
          failed = true;
          out.push(
            assistant(
              "",
              {},
              { stopReason: "error", errorMessage: `opencode: ${e.data?.message ?? e.message ?? e.name ?? "failed"}` },
            ),
          );
          break;
        }
      }
    }),
  };
}

export const opencode: ForeignRuntime = {
  name: "opencode",
  bin: "opencode",
  npmPackage: "opencode-ai",
  notes: ["runs on opencode: no steering, no subagent_finalize, resume replays the transcript"],
  ownConfig: (env) => [
    `${env.XDG_CONFIG_HOME ?? "~/.config"}/opencode`,
    `${env.XDG_DATA_HOME ?? "~/.local/share"}/opencode`,
    `${env.XDG_CACHE_HOME ?? "~/.cache"}/opencode`,
    `${env.XDG_STATE_HOME ?? "~/.local/state"}/opencode`,
    ...(env.OPENCODE_CONFIG ? [env.OPENCODE_CONFIG] : []),
  ],
  build(req) {
    // It has no flag to add to its system prompt: the agent's prompt leads the task. Models are provider/id.
    // The task goes on stdin: a message given as arguments is re-quoted by it (quotes escaped) before the model sees it.
    const args = ["run", "--format", "json"];
    if (req.model) args.push("-m", req.model);
    return { args, env: {}, stdin: withLeadingInstructions(req.systemPrompt, req.prompt), files: [], warnings: [] };
  },
  parser: opencodeParser,
};
