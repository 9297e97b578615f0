// Pure engine parts: line splitting, both transports' parsers, event reduction, activity lines, child
// invocation, the onUpdate throttle, and the rule that core/ imports no runtime module.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { toolCallLine, toolResultLine } from "../../../src/core/run/process/activity.ts";
import type { Clock } from "../../../src/core/host.ts";
import { buildInvocation, type InvocationInput } from "../../../src/core/run/launch/invocation.ts";
import { LineSplitter } from "../../../src/core/run/process/line-splitter.ts";
import type { Profile } from "../../../src/core/profiles/profile.ts";
import { applyEvent, LIMITS, newRunState, windowLines } from "../../../src/core/run/process/run-state.ts";
import { JsonModeParser, jsonModeKeep, parseCompactLine } from "../../../src/core/run/process/transport.ts";
import { Throttle } from "../../../src/ui/throttle.ts";
import { realClock } from "../../../src/core/host.ts";

const enc = new TextEncoder();

test("line splitter: any chunk boundary, CRLF, cut long lines, head-only policy", () => {
  const text = `first\r\n{"a":"é🙂"}\nthird\n${"x".repeat(50)}\n`;
  const bytes = enc.encode(text);
  for (let cut = 1; cut < bytes.length; cut++) {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l), 1000);
    s.push(bytes.subarray(0, cut));
    s.push(bytes.subarray(cut));
    s.end();
    expect(lines).toEqual(["first", '{"a":"é🙂"}', "third", "x".repeat(50)]);
  }
  const got: [string, boolean][] = [];
  const s = new LineSplitter((l, c) => got.push([l, c]), 10);
  s.push(enc.encode("0123456789abcdef\nshort\nlast-no-newline"));
  s.end();
  expect(got).toEqual([
    ["0123456789", true],
    ["short", false],
    ["last-no-ne", true],
  ]);
  const heads: string[] = [];
  const h = new LineSplitter((l) => heads.push(l), 1_000_000, jsonModeKeep, 96);
  h.push(enc.encode(`{"type":"agent_end","messages":[${'"m",'.repeat(100_000)}"m"]}\n{"type":"turn_start"}\n`));
  h.end();
  expect(heads[0].length).toBe(256);
  expect(heads[1]).toBe('{"type":"turn_start"}');
});

test("compact lines parse to events; anything else is ignored", () => {
  expect(parseCompactLine('{"type":"text","delta":"hi"}')).toEqual({ type: "text", delta: "hi" });
  expect(parseCompactLine('{"type":"bogus"}')).toBeNull();
  expect(parseCompactLine("not json")).toBeNull();
  expect(parseCompactLine('{"type":"text"')).toBeNull();
});

test("json mode: deltas with escapes, assistant messages, finalize via tool execution, retries", () => {
  const p = new JsonModeParser();
  const update = (delta: string) =>
    JSON.stringify({
      type: "message_update",
      assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta, partial: { big: "…" } },
    });
  expect(p.parse(update('say "hi"\n\\ é🙂'))).toEqual({ type: "text", delta: 'say "hi"\n\\ é🙂' });
  expect(
    p.parse(JSON.stringify({ type: "message_update", assistantMessageEvent: { type: "thinking_delta", delta: "x" } })),
  ).toBeNull();
  const end = p.parse(
    JSON.stringify({
      type: "message_end",
      message: {
        role: "assistant",
        content: [
          { type: "text", text: "A" },
          { type: "toolCall", id: "1", name: "read", arguments: { path: "x" } },
        ],
        usage: { input: 3, output: 4, cacheRead: 1, cacheWrite: 2, cost: { total: 0.5 } },
        model: "m",
        provider: "p",
        stopReason: "toolUse",
      },
    }),
  );
  expect(end).toEqual({
    type: "assistant",
    text: "A",
    toolCalls: [{ id: "1", name: "read", args: '{"path":"x"}' }],
    usage: { input: 3, output: 4, cacheRead: 1, cacheWrite: 2, cost: 0.5 },
    model: "m",
    provider: "p",
    stopReason: "toolUse",
    errorMessage: undefined,
  });
  expect(
    p.parse(
      JSON.stringify({
        type: "tool_execution_start",
        toolCallId: "f",
        toolName: "subagent_finalize",
        args: { status: "SUCCESS", result: "r" },
      }),
    ),
  ).toMatchObject({ type: "tool_start", name: "subagent_finalize" });
  expect(
    p.parse(
      JSON.stringify({
        type: "tool_execution_end",
        toolCallId: "f",
        toolName: "subagent_finalize",
        result: {},
        isError: false,
      }),
    ),
  ).toEqual({ type: "finalize", payload: { status: "SUCCESS", result: "r" } });
  // A rejected finalize (isError) is just a failed tool call.
  p.parse(
    JSON.stringify({
      type: "tool_execution_start",
      toolCallId: "g",
      toolName: "subagent_finalize",
      args: { status: "SUCCESS" },
    }),
  );
  expect(
    p.parse(
      JSON.stringify({
        type: "tool_execution_end",
        toolCallId: "g",
        toolName: "subagent_finalize",
        result: { content: [{ type: "text", text: "bad" }] },
        isError: true,
      }),
    ),
  ).toMatchObject({ type: "tool_end", isError: true });
  expect(
    p.parse(
      JSON.stringify({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "503" }),
    ),
  ).toEqual({ type: "retry", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "503" });
});

test("run state: usage sums, last text, loop counting, bounded activity and messages", () => {
  const s = newRunState(0);
  const assistant = (text: string, stopReason = "stop") =>
    applyEvent(
      s,
      {
        type: "assistant",
        text,
        toolCalls: [],
        usage: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, cost: 0.5 },
        stopReason,
      },
      1,
    );
  assistant("first");
  assistant("");
  expect(s.lastText).toBe("first");
  expect(s.usage).toEqual({ input: 2, output: 4, cacheRead: 6, cacheWrite: 8, cost: 1, turns: 2 });
  for (let i = 0; i < 3; i++) applyEvent(s, { type: "tool_start", id: `${i}`, name: "read", args: '{"path":"a"}' }, 2);
  expect(s.loopCount).toBe(3);
  applyEvent(s, { type: "tool_start", id: "x", name: "read", args: '{"path":"b"}' }, 2);
  expect(s.loopCount).toBe(1);
  for (let i = 0; i < LIMITS.activityLines + 50; i++)
    applyEvent(s, { type: "tool_start", id: `${i}`, name: "bash", args: `{"command":"echo ${i}"}` }, 3);
  expect(s.activity.length).toBe(LIMITS.activityLines);
  expect(windowLines(s, 3)).toEqual([
    `bash → echo ${LIMITS.activityLines + 47}`,
    `bash → echo ${LIMITS.activityLines + 48}`,
    `bash → echo ${LIMITS.activityLines + 49}`,
  ]);
  for (let i = 0; i < LIMITS.messages + 10; i++)
    applyEvent(s, { type: "tool_end", id: `${i}`, name: "bash", isError: false, result: "ok" }, 4);
  expect(s.messages.length).toBe(LIMITS.messages);
  assistant("", "error");
  expect(s.errorMessage).toBe("model call ended: error");
});

test("activity lines condense ls and find to one short line each", () => {
  expect(toolCallLine("ls", '{"path":"src/"}')).toBe("ls → src/");
  expect(toolCallLine("find", '{"pattern":"*.ts","path":"src"}')).toBe("find → *.ts in src");
  expect(toolResultLine("ls", "a.ts\nb.ts\nlib/", false)).toBe("  2 files, 1 dir");
  expect(toolResultLine("ls", "", false)).toBe("  (empty)");
  expect(toolResultLine("find", "a.ts\nb.ts\nc.ts", false)).toBe("  3 matches");
  expect(toolResultLine("find", "", false)).toBe("  0 matches");
  expect(toolResultLine("ls", "a\nb/\n[500 entries limit reached]", false)).toBe("  1 file, 1 dir+");
  expect(toolResultLine("bash", "anything", false)).toBeNull();
  expect(toolResultLine("bash", "command failed", true)).toBe("  ✗ command failed");
});

const base = (over: Partial<InvocationInput> = {}): InvocationInput => ({
  piCommand: ["bun", "--no-install", "/pi/cli.js"],
  childExtension: "/ext/child.js",
  profile: null,
  transport: "compact",
  finalize: "required",
  sessionFile: "/s/x.jsonl",
  depth: 1,
  maxDepth: 1,
  parentPid: 42,
  promptFile: "/tmp/p.md",
  baseEnv: { PATH: "/bin" },
  ...over,
});
const profile = (over: Partial<Profile>): Profile => ({
  name: "p",
  source: "user",
  systemPrompt: "You are p.",
  systemPromptMode: "replace",
  ...over,
});

test("invocation: no ask_parent where nobody can answer; a cache-true fork takes its instructions in its first message", () => {
  const headless = buildInvocation(base({ canAsk: false }));
  expect(headless.argv.join(" ")).toContain("--tools read,bash,edit,write,subagent_finalize");
  expect(headless.argv.join(" ")).not.toContain("ask_parent");
  expect(headless.env.PI_SUBAGENT_ASK).toBe("0");
  expect(buildInvocation(base()).env.PI_SUBAGENT_ASK).toBeUndefined();
  const parent = {
    cwd: "/w",
    systemPrompt: "PARENT SYSTEM",
    tools: [{ name: "read", description: "r", parameters: {} }],
  };
  // At max depth, optional finalize, an agent in replace mode: the parent's tools stay (no --tools/--exclude-tools),
  // no finalize tool, no ask_parent, no system prompt of its own; the agent's prompt and the plain-answer
  // instruction follow the task.
  const fork = buildInvocation(
    base({ forkPrompt: parent, finalize: "optional", profile: profile({}), piVersion: "1.6.0" }),
  );
  expect(fork.argv).not.toContain("--tools");
  expect(fork.argv).not.toContain("--exclude-tools");
  expect(fork.argv).not.toContain("--system-prompt");
  expect(fork.env).toMatchObject({
    PI_SUBAGENT_FINALIZE: "off",
    PI_SUBAGENT_ASK: "0",
    PI_SUBAGENT_FORK_PROMPT: "/tmp/p.md.fork.json",
  });
  expect(fork.env.PI_SUBAGENT_APPEND_PROMPT).toBeUndefined();
  expect(fork.files).toEqual([{ path: "/tmp/p.md.fork.json", content: JSON.stringify(parent) }]);
  expect(fork.taskNote).toStartWith("You are p.");
  expect(fork.taskNote).toContain("plain text");
  // A structured result keeps the finalize contract (and tool) in a fork.
  const structured = buildInvocation(base({ forkPrompt: parent, finalize: "required" }));
  expect(structured.env.PI_SUBAGENT_FINALIZE).toBe("required");
  expect(structured.taskNote).toContain("subagent_finalize");
});

test("invocation: tools, model flags, prompt files, env, api key by env", () => {
  const plain = buildInvocation(base());
  // Our additions reach the child extension by file (appended after pi's own prompt), never by
  // --append-system-prompt, which would replace the user's APPEND_SYSTEM.md.
  expect(plain.argv).toEqual([
    "bun",
    "--no-install",
    "/pi/cli.js",
    "-p",
    "--session",
    "/s/x.jsonl",
    "-e",
    "/ext/child.js",
    "--tools",
    "read,bash,edit,write,subagent_finalize,ask_parent",
  ]);
  expect(plain.env).toMatchObject({
    PATH: "/bin",
    PI_SUBAGENT_CHILD: "1",
    PI_SUBAGENT_DEPTH: "1",
    PI_SUBAGENT_MAX_DEPTH: "1",
    PI_SUBAGENT_PARENT_PID: "42",
    PI_SUBAGENT_TRANSPORT: "compact",
    PI_SUBAGENT_APPEND_PROMPT: "/tmp/p.md",
  });
  expect(plain.files).toEqual([{ path: "/tmp/p.md", content: expect.stringContaining("subagent_finalize") }]);
  const allow = buildInvocation(
    base({
      profile: profile({
        tools: ["read", "subagent", "delegate_to_subagents"],
        model: "claude-x",
        provider: "anthropic",
        thinking: "high",
      }),
    }),
  );
  expect(allow.argv.join(" ")).toContain(
    "--model anthropic/claude-x --thinking high --tools read,subagent_finalize,ask_parent",
  );
  expect(allow.argv).toContain("--system-prompt");
  expect(allow.env.PI_SUBAGENT_APPEND_PROMPT).toBeUndefined();
  expect(allow.files[0].content).toStartWith("You are p.");
  expect(allow.files[0].content).toContain("subagent_finalize");
  const deny = buildInvocation(base({ profile: profile({ excludeTools: ["bash"] }), finalize: "off", depth: 0 }));
  expect(deny.argv.join(" ")).toContain("--tools read,edit,write");
  expect(deny.argv.join(" ")).not.toContain("subagent_finalize");
  // Inside pi the deny list subtracts from the parent's active tools; `subagent` itself is never inherited.
  const inherited = buildInvocation(
    base({
      profile: profile({ excludeTools: ["bash"] }),
      depth: 0,
      maxDepth: 2,
      parentTools: ["read", "grep", "bash", "subagent", "delegate_to_subagents"],
    }),
  );
  expect(inherited.argv.join(" ")).toContain("--tools read,grep,delegate_to_subagents,subagent_finalize,ask_parent");
  const none = buildInvocation(base({ profile: profile({ noTools: true }) }));
  expect(none.argv.join(" ")).toContain("--tools subagent_finalize,ask_parent");
  const json = buildInvocation(
    base({
      transport: "json",
      profile: profile({ systemPromptMode: "append", apiKey: "secret-key-value", model: "anthropic/claude-x" }),
    }),
  );
  expect(json.argv.slice(3, 5)).toEqual(["--mode", "json"]);
  expect(json.argv).not.toContain("secret-key-value");
  expect(json.env.ANTHROPIC_API_KEY).toBe("secret-key-value");
  expect(json.argv).not.toContain("--append-system-prompt");
  expect(json.env.PI_SUBAGENT_APPEND_PROMPT).toBe("/tmp/p.md");
});

test("throttle: at most one call per interval, trailing value always delivered, flush sends the final", () => {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  const clock: Clock = {
    now: () => now,
    setTimeout: (fn, ms) => (timers.push({ at: now + ms, fn }), timers.length - 1),
    clearTimeout: (h) => (timers[h as number].fn = () => {}),
  };
  const sent: number[] = [];
  const t = new Throttle<number>((v) => sent.push(v), 100, clock);
  for (let i = 0; i < 5000; i++) {
    now = i; // 5,000 updates over 5 seconds
    t.push(i);
    for (const timer of timers) if (timer.at <= now) timer.fn(), (timer.fn = () => {});
  }
  expect(sent.length).toBeLessThanOrEqual(51);
  expect(sent.length).toBeGreaterThanOrEqual(45);
  t.flush(9999);
  expect(sent.at(-1)).toBe(9999);
});

test("throttle: a burst in one turn of the event loop (sixteen tasks starting) is one update, with the last value", async () => {
  const sent: string[] = [];
  const t = new Throttle<string>((v) => sent.push(v), 100, realClock);
  for (let running = 1; running <= 16; running++) t.push(`${running} running, ${16 - running} queued`);
  expect(sent).toEqual([]);
  await new Promise((r) => setTimeout(r, 0));
  expect(sent).toEqual(["16 running, 0 queued"]);
});

test("core/ imports no runtime module, no terminal code and nothing from the fronts; layers only point down", () => {
  const root = join(import.meta.dir, "..", "..", "..", "src", "core");
  // core/ (shared base) <- profiles/, store/ <- run/process/ (one child process) <- run/launch/, run/runners/ (what
  // a child starts with, where it runs) <- run/runtimes/ (what runs: pi or another harness's CLI) <- run/ (a task's
  // stages, the scheduler) <- call/ (a front's request, its tasks mapped and checked once for every front) <- batch/
  // (a job of many items on the call runner): a lower layer never imports a higher one.
  const rank: Record<string, number> = {
    "": 0,
    profiles: 1,
    store: 1,
    schedule: 1,
    "run/process": 2,
    "run/launch": 3,
    "run/runners": 3,
    "run/hooks": 3,
    trace: 1,
    "run/runtimes": 4,
    run: 5,
    call: 6,
    batch: 7,
  };
  const layerOf = (path: string) => {
    const parts = path.split("/");
    if (parts.length === 1) return "";
    return parts[0] === "run" && parts.length > 2 ? `run/${parts[1]}` : parts[0];
  };
  const files = readdirSync(root, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".ts"));
  expect(files.length).toBeGreaterThan(20);
  for (const file of files) {
    const src = readFileSync(join(root, file), "utf8");
    const layer = layerOf(file);
    expect(layer in rank, `unknown core folder ${layer}`).toBe(true);
    const imports = [
      ...src.matchAll(/(?:import|export)[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g),
    ].map((m) => m[1] ?? m[2]);
    for (const spec of imports) {
      expect(spec.startsWith("bun:") || spec.startsWith("node:"), `${file} imports ${spec}`).toBe(false);
      expect(/^(fs|path|os|child_process|picocolors)$/.test(spec), `${file} imports ${spec}`).toBe(false);
      if (!spec.startsWith(".")) continue;
      const target = relative(root, join(dirname(join(root, file)), spec));
      expect(target.startsWith(".."), `${file} imports ${spec} (outside core/)`).toBe(false);
      const targetLayer = layerOf(target);
      expect(
        rank[targetLayer] <= rank[layer] && (targetLayer === layer || rank[targetLayer] < rank[layer]),
        `${file} imports ${spec} (a back arrow)`,
      ).toBe(true);
    }
  }
});

test("src/ folders only import lower layers, and no CLI helper imports a command (docs/architecture.md: where things live)", () => {
  const src = join(import.meta.dir, "..", "..", "..", "src");
  // The layering docs/architecture.md states: a folder imports only folders of a lower rank (never one beside it).
  // extensions/: pi's codemode worker, at the path a compiled pi starts it from (part of the embedded pi). pi/ and mcp/
  // are two fronts side by side: neither imports the other.
  const rank: Record<string, number> = {
    core: 0,
    host: 1,
    scripted: 1,
    ui: 2,
    "child-extension": 2,
    control: 3,
    pi: 4,
    mcp: 4,
    embedded: 5,
    extensions: 5,
    cli: 6,
  };
  const files = readdirSync(src, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".ts"));
  expect(files.length).toBeGreaterThan(100);
  for (const file of files) {
    const folder = file.split("/")[0];
    expect(folder in rank, `src/${folder} has no place in the layering`).toBe(true);
    const text = readFileSync(join(src, file), "utf8");
    const imports = [
      ...text.matchAll(/(?:import|export)[^'"]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g),
    ].map((m) => m[1] ?? m[2]);
    for (const spec of imports) {
      if (!spec.startsWith(".")) continue;
      const target = relative(src, join(dirname(join(src, file)), spec));
      if (target.startsWith("..")) continue; // package.json, node_modules
      const to = target.split("/")[0];
      if (to !== folder)
        expect(rank[to] < rank[folder], `src/${file} imports ${spec} (${folder} may not import ${to})`).toBe(true);
      const helper = file.startsWith("cli/") && !file.startsWith("cli/commands/") && file !== "cli/main.ts";
      if (helper) expect(target.startsWith("cli/commands/"), `src/${file} imports the command ${spec}`).toBe(false);
    }
  }
});
