// The runtime parsers' edge cases that the scripted servers do not produce (src/core/run/runtimes/): one Claude
// Code message streamed as several lines, a sub-agent's lines, Codex's failed turn, opencode's end on exit.
import { expect, test } from "bun:test";
import { FOREIGN_RUNTIMES } from "../../../../src/core/run/runtimes/index.ts";
import { claudeToolFlags } from "../../../../src/core/run/runtimes/claude-code.ts";
import { applyEvent, newRunState } from "../../../../src/core/run/process/run-state.ts";
import type { ChildEvent } from "../../../../src/core/types.ts";

const feed = (name: keyof typeof FOREIGN_RUNTIMES, lines: unknown[], exitCode?: number) => {
  const p = FOREIGN_RUNTIMES[name].parser();
  const events: ChildEvent[] = lines.flatMap((l) => p.parse(JSON.stringify(l)));
  if (exitCode !== undefined) events.push(...(p.end?.(exitCode) ?? []));
  const state = newRunState(0);
  for (const ev of events) applyEvent(state, ev, 1);
  return { events, state };
};

test("Claude Code: one message in several lines is one turn; a sub-agent's lines are not this child's; totals win", () => {
  const msg = (content: unknown[]) => ({
    type: "assistant",
    message: { id: "m1", model: "claude-x", content, usage: { input_tokens: 50, output_tokens: 1 } },
  });
  const { events, state } = feed("claude-code", [
    { type: "system", subtype: "init", session_id: "s1" },
    msg([{ type: "text", text: "Let me look." }]),
    msg([{ type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }]),
    { type: "assistant", parent_tool_use_id: "t0", message: { id: "sub", content: [{ type: "text", text: "inner" }] } },
    {
      type: "user",
      message: {
        content: [
          { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "a.txt" }], is_error: false },
        ],
      },
    },
    {
      type: "assistant",
      message: { id: "m2", content: [{ type: "text", text: "Done." }], usage: { input_tokens: 70 } },
    },
    {
      type: "result",
      subtype: "success",
      is_error: false,
      result: "Done.",
      num_turns: 2,
      total_cost_usd: 0.01,
      usage: { input_tokens: 120, output_tokens: 40 },
    },
  ]);
  expect(events.filter((e) => e.type === "assistant").map((e) => (e as { text: string }).text)).toEqual([
    "Let me look.",
    "Done.",
  ]);
  expect(events.find((e) => e.type === "tool_end")).toEqual({
    type: "tool_end",
    id: "t1",
    name: "Bash",
    isError: false,
    result: "a.txt",
  });
  expect(state.lastText).toBe("Done.");
  expect(state.usage).toEqual({ input: 120, output: 40, cacheRead: 0, cacheWrite: 0, cost: 0.01, turns: 2 });
  expect(state.agentEnded).toBe(true);
});

test("Claude Code: a result that is an error (turn limit) ends the run as an error with its reason", () => {
  const { state } = feed("claude-code", [
    { type: "result", subtype: "error_max_turns", is_error: true, num_turns: 3, usage: {} },
  ]);
  expect(state.errorMessage).toBe("Claude Code: reached its turn limit (3 turns)");
  expect(state.usage.turns).toBe(3);
});

test("Codex: a failed turn is an error with its message; cached input is counted apart", () => {
  const ok = feed("codex", [
    { type: "turn.started" },
    { type: "item.completed", item: { id: "i1", type: "agent_message", text: "hi" } },
    { type: "turn.completed", usage: { input_tokens: 100, cached_input_tokens: 40, output_tokens: 5 } },
  ]);
  expect(ok.state.usage).toMatchObject({ input: 60, cacheRead: 40, output: 5, turns: 1 });
  const failed = feed("codex", [
    { type: "turn.started" },
    { type: "error", message: "stream disconnected" },
    { type: "turn.failed", error: { message: "quota exceeded" } },
  ]);
  expect(failed.state.errorMessage).toBe("Codex: quota exceeded");
  expect(failed.state.agentEnded).toBe(true);
});

test("opencode: its stream has no last event, so a clean exit ends the run; an error line or a failed exit does not", () => {
  const lines = [
    { type: "step_start", sessionID: "ses_1", part: {} },
    { type: "text", sessionID: "ses_1", part: { text: "ok" } },
    { type: "step_finish", sessionID: "ses_1", part: { tokens: { input: 10, output: 2 }, cost: 0.001 } },
  ];
  expect(feed("opencode", lines, 0).state.agentEnded).toBe(true);
  expect(feed("opencode", lines, 1).state.agentEnded).toBe(false);
  const err = feed(
    "opencode",
    [...lines, { type: "error", error: { name: "APIError", data: { message: "bad key" } } }],
    0,
  );
  expect(err.state.errorMessage).toBe("opencode: bad key");
  expect(err.state.agentEnded).toBe(false);
});

test("an agent's tool rules as Claude Code's flags", () => {
  expect(claudeToolFlags({ allow: ["read", "grep", "find", "ls"] })).toEqual({
    args: ["--tools", "Read,Grep,Glob,LS"],
    warnings: [],
  });
  expect(claudeToolFlags({ none: true })).toEqual({ args: ["--tools", ""], warnings: [] });
  expect(claudeToolFlags({ deny: ["bash", "mcp__docs__search"] })).toEqual({
    args: ["--disallowedTools", "Bash,mcp__docs__search"],
    warnings: [],
  });
  expect(claudeToolFlags({ deny: ["subagent"] })).toEqual({
    args: [],
    warnings: ["Claude Code has no subagent: nothing to deny"],
  });
  const allow = claudeToolFlags({ allow: ["edit", "mcp__docs__search", "web_search"] });
  expect(allow.args).toEqual(["--tools", "Edit"]);
  expect(allow.warnings).toEqual([
    "Claude Code has no web_search: left out of this run",
    "mcp__docs__search: Claude Code's MCP servers come from its own configuration; the allow list does not limit them",
  ]);
});
