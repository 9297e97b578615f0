// A stand-in for a child pi that speaks our compact transport (fd 3) or pi's JSON mode (stdout), and misbehaves
// on request (FAKE_PI_MODE) in the ways a real pi cannot be made to on demand.
import { spawn } from "node:child_process";
import * as fs from "node:fs";

const mode = process.env.FAKE_PI_MODE ?? "normal";
const stateFile = process.env.FAKE_PI_STATE ?? "";
const pidFile = process.env.FAKE_PI_PIDS ?? "";
const sessionFile = process.argv[process.argv.indexOf("--session") + 1];

const emit = (ev: unknown) => fs.writeSync(3, `${JSON.stringify(ev)}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hang = () => setInterval(() => {}, 1000);
const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, cost: 0.001 };
const assistant = (text: string, extra: Record<string, unknown> = {}) =>
  emit({
    type: "assistant",
    text,
    toolCalls: [],
    usage,
    model: "fake-model",
    provider: "fake",
    stopReason: "stop",
    ...extra,
  });
const finalize = (result: string) => {
  emit({
    type: "tool_start",
    id: "f1",
    name: "subagent_finalize",
    args: JSON.stringify({ status: "SUCCESS", result }),
  });
  emit({ type: "finalize", payload: { status: "SUCCESS", result } });
  emit({ type: "tool_end", id: "f1", name: "subagent_finalize", isError: false, result: "ok" });
};

/** The owner's control pipe (fd 4), when it gave one: steers wait here until the next turn boundary, where a real pi
 *  delivers them and our child extension reports each as `steered` (deliverSteers). */
const steers: { id: string; text: string }[] = [];
// Read only by the modes that deliver steers: a pending read keeps the process alive.
const control =
  process.env.PI_SUBAGENT_CONTROL_FD && mode === "many-turns"
    ? (Bun.file(Number(process.env.PI_SUBAGENT_CONTROL_FD)).stream() as ReadableStream<Uint8Array>).getReader()
    : null;
if (control)
  void (async () => {
    const dec = new TextDecoder();
    let buf = "";
    try {
      for (;;) {
        const { value, done } = await control.read();
        if (done) return;
        buf += dec.decode(value, { stream: true });
        for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
          const line = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          if (line.type === "steer") steers.push({ id: line.id, text: line.text });
        }
      }
    } catch {
      // the owner closed its end
    }
  })();
/** A turn boundary: the steers that came meanwhile enter the conversation. */
const deliverSteers = () => {
  for (const s of steers.splice(0)) emit({ type: "steered", id: s.id, text: s.text });
};
const closeControl = () => void control?.cancel().catch(() => {});

const stdin = fs.readFileSync(0, "utf8"); // the task arrives on stdin, which is closed after it
if (sessionFile) fs.writeFileSync(sessionFile, "{}\n");
emit({ type: "session", id: "fake-session", file: sessionFile });
emit({ type: "turn_start" });

switch (mode) {
  case "normal":
    emit({ type: "text", delta: "Working on " });
    emit({ type: "text", delta: "it." });
    assistant("Working on it.");
    finalize("normal result");
    emit({ type: "agent_end" });
    break;
  case "forget-then-finalize": {
    const second = stateFile && fs.existsSync(stateFile);
    if (stateFile) fs.writeFileSync(stateFile, "seen");
    if (second) finalize("finalized after nudge");
    else assistant("I forgot to finalize.");
    emit({ type: "agent_end" });
    break;
  }
  case "work-after-agent-end":
    // pi ≥ 0.80: agent_end, then automatic work (compaction recovery, a queued message) longer than any grace,
    // and only then agent_settled.
    assistant("first pass");
    emit({ type: "agent_end" });
    await sleep(1200);
    emit({ type: "turn_start" });
    assistant("after the automatic work");
    emit({ type: "agent_end" });
    emit({ type: "settled" });
    hang();
    break;
  case "hang-after-end":
    finalize("done but hanging");
    emit({ type: "agent_end" });
    hang();
    break;
  case "ignore-term":
    process.on("SIGTERM", () => {});
    emit({ type: "tool_start", id: "t1", name: "bash", args: '{"command":"sleep 100"}' });
    hang();
    break;
  case "grandchild": {
    const detached = spawn("sleep", [`30${process.pid}`], { detached: true, stdio: "ignore" });
    const plain = spawn("sleep", [`31${process.pid}`], { stdio: "ignore" });
    fs.writeFileSync(pidFile, `${detached.pid} ${plain.pid}`);
    finalize("left grandchildren");
    emit({ type: "agent_end" });
    await sleep(100);
    process.exit(0);
    break;
  }
  case "crash":
    emit({ type: "text", delta: "partial" });
    process.stderr.write("fatal: the fake child broke on purpose\n");
    process.exit(1);
    break;
  case "crash-stack": {
    // A provider-style failure: the useful lines come first, then a long stack and unrelated noise.
    process.stderr.write("Error: 401 Unauthorized: invalid x-api-key for provider nowhere\n");
    for (let i = 0; i < 200; i++) process.stderr.write(`    at frame${i} (/opt/pi/dist/some/module${i}.js:${i}:17)\n`);
    for (let i = 0; i < 40; i++) process.stderr.write(`debug: noise line ${i} ${"x".repeat(60)}\n`);
    process.stderr.write("pi exited after the failure above\n");
    process.exit(1);
    break;
  }
  case "flood-fd3": {
    const line = `${JSON.stringify({ type: "text", delta: "x".repeat(60_000) })}\n`;
    for (;;) fs.writeSync(3, line);
  }
  case "cut-answer":
    // What our child extension sends for a 17 M-character answer: its first 4 M characters, and how long it was.
    assistant("z".repeat(4 * 1024 * 1024), { cut: { of: 17_000_000 } });
    emit({ type: "agent_end" });
    break;
  case "huge-line":
    // One assistant event past the 16 MB line limit (a child extension that did not fit it), then a normal end.
    assistant("y".repeat(17 * 1024 * 1024));
    emit({ type: "agent_end" });
    break;
  case "flood-stderr":
  case "flood-stdout": {
    const chunk = Buffer.alloc(64 * 1024, 120);
    const fd = mode === "flood-stdout" ? 1 : 2;
    for (;;) fs.writeSync(fd, chunk);
  }
  case "utf8-split": {
    const bytes = Buffer.from(`${JSON.stringify({ type: "text", delta: "héllo wörld 🙂" })}\n`);
    const cut = bytes.indexOf(Buffer.from("🙂")) + 2; // in the middle of the 4-byte emoji
    fs.writeSync(3, bytes.subarray(0, cut));
    await sleep(80);
    fs.writeSync(3, bytes.subarray(cut));
    assistant("héllo wörld 🙂");
    finalize("héllo wörld 🙂");
    emit({ type: "agent_end" });
    break;
  }
  case "bad-utf8": {
    // Invalid UTF-8 bytes inside a JSON string: decoded as U+FFFD, never a crash.
    fs.writeSync(
      3,
      Buffer.concat([
        Buffer.from('{"type":"text","delta":"ok '),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from(' end"}\n'),
      ]),
    );
    assistant("ok \ufffd end");
    finalize("bad bytes survived");
    emit({ type: "agent_end" });
    break;
  }
  case "invalid-json":
    fs.writeSync(3, 'not json at all\n{"type":"text","delta":\n{broken\n\n');
    emit({ type: "nonsense-event" });
    finalize("survived garbage");
    emit({ type: "agent_end" });
    break;
  case "provider-error":
    assistant("", { stopReason: "error", errorMessage: "401 invalid api key from the fake provider" });
    emit({ type: "agent_end" });
    break;
  case "rate-limited-once":
    // A pi whose own retries were spent inside a rate limit (Retry-After: 1 s); told to go on, it finishes.
    if (stdin.includes("rate limited; continue")) {
      finalize("finished after the limit");
    } else {
      emit({ type: "rate_limit", status: 429, retryAfterMs: 1000 });
      assistant("", { stopReason: "error", errorMessage: "429 Rate limit reached for requests" });
    }
    emit({ type: "agent_end" });
    break;
  case "many-turns":
  case "many-turns-deaf":
    // Six turns that each ask for a tool, then the finalize turn; deaf: a steer never reaches the model.
    for (let i = 0; i < 6; i++) {
      if (mode === "many-turns") deliverSteers();
      emit({ type: "tool_start", id: `m${i}`, name: "read", args: `{"path":"f${i}.txt"}` });
      emit({ type: "tool_end", id: `m${i}`, name: "read", isError: false, result: `content ${i}` });
      assistant(`turn ${i}`, {
        toolCalls: [{ id: `m${i}`, name: "read", args: `{"path":"f${i}.txt"}` }],
        stopReason: "toolUse",
      });
      await sleep(30);
    }
    finalize("all turns done");
    emit({ type: "agent_end" });
    closeControl();
    break;
  case "loop":
    for (let i = 0; i < 8; i++) {
      emit({ type: "tool_start", id: `l${i}`, name: "read", args: '{"path":"same.txt"}' });
      emit({ type: "tool_end", id: `l${i}`, name: "read", isError: false, result: "same" });
      await sleep(20);
    }
    hang();
    break;
  case "idle":
    hang();
    break;
  case "busy-past-timeout":
    for (let i = 0; i < 10; i++) {
      emit({ type: "tool_start", id: `b${i}`, name: "bash", args: JSON.stringify({ command: `step ${i}` }) });
      await sleep(250);
      emit({ type: "tool_end", id: `b${i}`, name: "bash", isError: false, result: `step ${i} ok` });
    }
    finalize("finished after the timeout while busy");
    emit({ type: "agent_end" });
    break;
  case "chatty-past-timeout":
    // Streams text for 3 s without any tool call, then finishes.
    for (let i = 0; i < 30; i++) {
      emit({ type: "text", delta: `word ${i} ` });
      await sleep(100);
    }
    finalize("chatted to the end");
    emit({ type: "agent_end" });
    break;
  default:
    process.stderr.write(`unknown FAKE_PI_MODE ${mode}\n`);
    process.exit(2);
}
