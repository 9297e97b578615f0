// Forked context end to end: a child starts from a copy of the parent pi session's conversation, without our own
// delegation traffic. Real parent and child pi against the scripted model server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { messageText, script } from "../../../src/scripted/model-server.ts";
import { cacheText, commonPrefix } from "../../../src/scripted/prompt-cache.ts";
import { FORK_ANSWER_INSTRUCTION } from "../../../src/core/run/process/finalize-contract.ts";
import { cli, piWorld, type PiWorld, summaryOf, taskWhy } from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

/** Every text a request carried (all roles, tool calls as JSON), for the request whose newest user message has `marker`. */
function requestWith(marker: string): string | undefined {
  const req = world.server.requests.find((r) => {
    const users = (r.messages ?? []).filter((m) => m.role === "user");
    return users.length && messageText(users.at(-1)!).startsWith(marker);
  });
  return req && JSON.stringify(req.messages);
}

/** Names of the tools called in the request's conversation, and the tool results' texts. */
function toolTraffic(marker: string): { calls: string[]; results: string[] } {
  const req = world.server.requests.find((r) => {
    const users = (r.messages ?? []).filter((m) => m.role === "user");
    return users.length && messageText(users.at(-1)!).startsWith(marker);
  })!;
  const calls = (req.messages ?? []).flatMap((m) =>
    ((m.tool_calls ?? []) as { function?: { name?: string } }[]).map((c) => c.function?.name ?? ""),
  );
  const results = (req.messages ?? []).filter((m) => m.role === "tool").map(messageText);
  return { calls, results };
}

test("context: fork — the child sees the parent's conversation minus the delegating call, and repeats the parent's request as a cached prefix", async () => {
  world.server.billing.cache = true;
  const from = world.server.requests.length;
  const r = await runParentPi(world, {
    runtime: "bun",
    steps: [
      { tool: "bash", args: { command: "echo PARENT-CONTEXT-77" } },
      { tool: "delegate_to_subagents", args: { tasks: [{ name: "plain", prompt: "FRESH-TASK-5 answer please" }] } },
      {
        tool: "delegate_to_subagents",
        // A forked child answers in plain text; the parent's delegation tools are stand-ins that refuse.
        args: {
          tasks: [
            {
              name: "forked",
              context: "fork",
              prompt: `FORKED-TASK-9 ${script([{ tool: "delegate_to_subagents", args: { tasks: [{ name: "n", prompt: "nested" }] } }, { text: "forked ok" }])}`,
            },
          ],
        },
      },
      { text: "parent done" },
    ],
  });
  expect(r.code, r.stderr).toBe(0);
  const forked = r.results[2];
  expect(forked.isError, forked.text).toBe(false);
  expect(forked.text).toMatch(/^✓ forked: completed/);
  expect(forked.text).toContain("forked ok");
  const seen = requestWith("FORKED-TASK-9")!;
  expect(seen).toBeDefined();
  expect(seen).toContain("PARENT-CONTEXT-77"); // the parent's own tool work
  expect(seen).toContain("parent task"); // the user's message to the parent
  const traffic = toolTraffic("FORKED-TASK-9");
  // The earlier delegation stays as the parent saw it; the delegating call (no result yet) is cut.
  expect(traffic.calls).toEqual(["bash", "delegate_to_subagents"]);
  expect(traffic.results.join("\n")).toContain("plain");
  // A fresh task sees none of it (the default).
  expect(requestWith("FRESH-TASK-5")).not.toContain("PARENT-CONTEXT-77");

  // Cache-true: the child sends the parent's tools and system prompt, and its first request begins with the
  // parent's whole delegating request; the server bills that part as a cache read.
  const mine = world.server.requests.slice(from);
  const parentReqs = mine.filter(
    (q) =>
      (q.messages ?? []).filter((m) => m.role === "user").length === 1 &&
      messageText((q.messages ?? []).find((m) => m.role === "user")!).startsWith("parent task"),
  );
  const delegating = parentReqs[2];
  const child = mine.find((q) => messageText(q.messages!.at(-1)!).startsWith("FORKED-TASK-9"))!;
  const names = (q: typeof child) => (q.tools ?? []).map((t) => t.function?.name);
  expect(names(child)).toEqual(names(delegating));
  expect(messageText(child.messages![0])).toBe(messageText(delegating.messages![0]));
  const shared = commonPrefix(cacheText(delegating), cacheText(child)) / cacheText(delegating).length;
  expect(shared).toBeGreaterThanOrEqual(0.9);
  expect(child.usage!.cached).toBeGreaterThanOrEqual(delegating.usage!.prompt * 0.9);
  const refused = mine.find((q) => messageText(q.messages!.at(-1)!).includes("not available to a forked sub-agent"));
  expect(refused, "the stand-in delegation tool should refuse").toBeDefined();
  // Its own instructions follow its task in its first message.
  expect(messageText(child.messages!.at(-1)!)).toContain(FORK_ANSWER_INSTRUCTION);
  world.server.billing.cache = false;
}, 120_000);

test("CLI --fork SESSION_FILE forks from a pi session; context fork without --fork is refused before anything starts", async () => {
  await runParentPi(world, {
    runtime: "bun",
    steps: [{ tool: "bash", args: { command: "echo CLI-FORK-SOURCE-31" } }, { text: "parent said OK" }],
  });
  const file = readdirSync(world.root)
    .filter((f) => f.startsWith("parent-"))
    .map((f) => join(world.root, f))
    .find((f) => readFileSync(f, "utf8").includes("CLI-FORK-SOURCE-31"))!;
  const r = await cli(world, [
    "delegate",
    "--fork",
    file,
    `CLI-FORKED-4 ${script([{ finalize: { status: "SUCCESS", result: "ok" } }])}`,
    "--json",
  ]);
  expect(r.code, r.stderr).toBe(0);
  expect(summaryOf(r.json)[0].status, taskWhy(summaryOf(r.json)[0])).toBe("completed");
  expect(requestWith("CLI-FORKED-4")).toContain("CLI-FORK-SOURCE-31");

  const before = world.server.requests.length;
  const tasks = join(world.root, "fork-tasks.json");
  writeFileSync(tasks, JSON.stringify({ tasks: [{ name: "f", context: "fork", prompt: "x" }] }));
  const refused = await cli(world, ["delegate", "--tasks", tasks]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('task "f": context "fork" needs --fork SESSION');
  const missing = await cli(world, ["delegate", "--fork", "nosuchsession123", "x"]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain("--fork nosuchsession123 is neither a pi session file nor the id");
  expect(world.server.requests.length).toBe(before);

  // `run` takes the same flag.
  const one = await cli(world, [
    "run",
    "default",
    `RUN-FORKED-6 ${script([{ finalize: { status: "SUCCESS", result: "ok" } }])}`,
    "--fork",
    file,
    "--json",
  ]);
  expect(one.code, one.stderr).toBe(0);
  expect(requestWith("RUN-FORKED-6")).toContain("CLI-FORK-SOURCE-31");
  const runMissing = await cli(world, ["run", "default", "x", "--fork", "nosuchsession123"]);
  expect(runMissing.code).toBe(2);
  expect(runMissing.stderr).toContain("run: --fork nosuchsession123 is neither a pi session file nor the id");
}, 120_000);

test("an agent with context: fork and a gate in its front matter, through the subagent tool", async () => {
  mkdirSync(join(world.agentDir, "agents"), { recursive: true });
  writeFileSync(
    join(world.agentDir, "agents", "forker.md"),
    "---\nname: forker\ndescription: knows the conversation\ncontext: fork\ngate: 'echo AGENT-GATE-RAN'\n---\nYou continue the parent's work.",
  );
  const r = await runParentPi(world, {
    runtime: "bun",
    steps: [
      { tool: "bash", args: { command: "echo AGENT-FORK-CONTEXT-3" } },
      // Through `subagent` (finalize required) a cache-true fork still answers in plain text: no tool of its own.
      {
        tool: "subagent",
        args: { agent: "forker", task: `AGENT-FORKED-TASK ${script([{ text: "agent forked ok" }])}` },
      },
      { text: "parent done" },
    ],
  });
  expect(r.code, r.stderr).toBe(0);
  const res = r.results[1];
  expect(res.text).toContain("agent forked ok");
  expect(res.details.gate).toEqual({ passed: true, attempts: 1 });
  expect(requestWith("AGENT-FORKED-TASK")).toContain("AGENT-FORK-CONTEXT-3");
  expect(toolTraffic("AGENT-FORKED-TASK").calls).toEqual(["bash"]);
  // The agent's own prompt follows the task in the first message; the system prompt and tools are the parent's.
  const first = world.server.requests.find((q) => messageText(q.messages!.at(-1)!).startsWith("AGENT-FORKED-TASK"))!;
  expect(messageText(first.messages!.at(-1)!)).toContain("You continue the parent's work.");
  expect((first.tools ?? []).map((t) => t.function?.name)).not.toContain("subagent_finalize");
}, 90_000);
