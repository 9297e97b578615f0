// A stand-in for `pi --mode json`: pi's own event lines on stdout, including message_update lines that repeat
// the whole message (one of them huge), and the finalize call as tool_execution_start/end.
import * as fs from "node:fs";

fs.readFileSync(0);
const out = (v: unknown) => fs.writeSync(1, `${JSON.stringify(v)}\n`);
const msg = (text: string) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  usage: { input: 7, output: 3, cacheRead: 0, cacheWrite: 0, cost: { total: 0.002 } },
  model: "fake-model",
  provider: "fake",
  stopReason: "toolUse",
});

out({ type: "session", version: 3, id: "json-session", cwd: "/" });
out({ type: "agent_start" });
out({ type: "turn_start" });
let text = "";
for (const part of ["Hel", 'lo \\"quoted\\" ', "wörld"]) {
  text += part;
  out({
    type: "message_update",
    assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: part, partial: msg(text) },
    message: msg(text),
  });
}
// A message_update far bigger than anything we keep: it must be skipped, not parsed.
const huge = "y".repeat(3 * 1024 * 1024);
out({
  type: "message_update",
  assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "!", partial: msg(huge) },
  message: msg(huge),
});
out({ type: "message_end", message: msg(text) });
out({
  type: "tool_execution_start",
  toolCallId: "c1",
  toolName: "subagent_finalize",
  args: { status: "SUCCESS", result: "json transport result" },
});
out({
  type: "tool_execution_end",
  toolCallId: "c1",
  toolName: "subagent_finalize",
  result: { content: [{ type: "text", text: "ok" }] },
  isError: false,
});
out({ type: "agent_end", messages: [msg(huge)] });
