// A stand-in for a kept child (core/run/process/pool.ts): pi's RPC commands on stdin (`prompt`, `switch_session`,
// `extension_ui_response`), our compact events on fd 3, and the faults a real pi will not produce on demand. What a
// task does is in its prompt: "ok <result>", "editor" (an extension's editor dialog, answered by the pool),
// "die-idle" (finish, then exit while idle), "refuse" (pi refuses the prompt), "hang".
import * as fs from "node:fs";

const emit = (ev: unknown) => fs.writeSync(3, `${JSON.stringify(ev)}\n`);
const out = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);
const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, cost: 0.001 };
let session = process.argv[process.argv.indexOf("--session") + 1];
const waiting = new Map<string, (r: { cancelled?: boolean; value?: string }) => void>();

function finish(result: string): void {
  emit({
    type: "assistant",
    text: "",
    toolCalls: [{ name: "subagent_finalize", args: "{}" }],
    usage,
    model: "fake-model",
    provider: "fake",
    stopReason: "toolUse",
  });
  emit({
    type: "finalize",
    payload: { status: "SUCCESS", result: `${result} (pid ${process.pid}, ${session.split("/").pop()})` },
  });
  emit({ type: "agent_end" });
  emit({ type: "settled" });
}

async function prompt(id: string, message: string): Promise<void> {
  if (message === "refuse") {
    out({ id, type: "response", command: "prompt", success: false, error: "fake refusal: no API key" });
    return;
  }
  out({ id, type: "response", command: "prompt", success: true });
  emit({ type: "turn_start" });
  if (message === "hang") return;
  if (message === "editor") {
    out({ type: "extension_ui_request", id: "ui-1", method: "editor", title: "Edit" });
    const r = await new Promise<{ cancelled?: boolean }>((resolve) => waiting.set("ui-1", resolve));
    return finish(`editor cancelled=${!!r.cancelled}`);
  }
  finish(message.startsWith("ok ") ? message.slice(3) : message);
  if (message === "die-idle") setTimeout(() => process.exit(0), 100);
}

emit({ type: "session", id: "fake", file: session });
let buf = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  buf += chunk;
  for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
    const cmd = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (cmd.type === "extension_ui_response") waiting.get(cmd.id)?.(cmd);
    else if (cmd.type === "prompt") void prompt(cmd.id, cmd.message);
    else if (cmd.type === "switch_session") {
      if (String(cmd.sessionPath).includes("cancel"))
        out({ id: cmd.id, type: "response", command: "switch_session", success: true, data: { cancelled: true } });
      else {
        session = cmd.sessionPath;
        emit({ type: "session", id: "fake", file: session });
        out({ id: cmd.id, type: "response", command: "switch_session", success: true, data: { cancelled: false } });
      }
    }
  }
});
process.stdin.on("end", () => process.exit(0));
