// What a parent pi pays for our tools and whether it can still reach each one (pi/tool-exposure.ts), from the real
// requests a parent sends the scripted model: pi 1.6 declares the retrieval tools only when they are useful (or
// lets tool_search load them), pi 1.5.2 declares all five as before; every tool carries its annotations. And a
// call's isError: set when no task completed (all failed, or all cancelled), not when some did.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runParentPi } from "../../support/parent-pi.ts";
import { cli, piWorld, REPO, until, type PiWorld } from "../../support/pi-env.ts";
import { script, type ScriptStep } from "../../../src/scripted/model-server.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const LIST_EXT = join(REPO, "test", "fixtures", "tool-list-extension.ts");
const RETRIEVAL = ["get_subagent_output", "get_subagent_session", "list_subagent_profiles"];
const toolsOf = (q: { tools?: { function?: { name?: string } }[] }) => (q.tools ?? []).map((t) => t.function?.name);

/** A parent run; the requests it sent (its children's excluded) and what pi registered. */
async function parent(release: "current" | "prior", steps: ScriptStep[], marker: string) {
  const listFile = join(world.root, `tools-${marker}.json`);
  const before = world.server.requests.length;
  const r = await runParentPi(world, {
    runtime: "node",
    release,
    steps: [...steps, { text: `done ${marker}` }],
    args: ["-e", LIST_EXT],
    env: { TOOL_LIST_FILE: listFile },
  });
  expect(r.code, r.stderr).toBe(0);
  const requests = world.server.requests
    .slice(before)
    .filter((q) => JSON.stringify(q.messages ?? []).includes("parent task"));
  return { ...r, requests, registered: JSON.parse(readFileSync(listFile, "utf8")) as Record<string, any>[] };
}

test("pi 1.6 without a loader: the profile list from the start, output and transcript after a delegation; every call works; annotations on all", async () => {
  const r = await parent(
    "current",
    [
      { tool: "list_subagent_profiles", args: {} },
      { tool: "delegate_to_subagents", args: { tasks: [{ name: "a", prompt: "reach me" }] } },
      { tool: "get_subagent_output", args: { sessionId: "{{lastSessionId}}" } },
      { tool: "delegate_to_subagents", args: { tasks: [{ name: "b", prompt: "read me" }] } },
      { tool: "get_subagent_session", args: { sessionId: "{{lastSessionId}}" } },
    ],
    "noloader",
  );
  const [first, , afterDelegation] = r.requests.map(toolsOf);
  expect(first).toEqual(expect.arrayContaining(["delegate_to_subagents", "subagent", "list_subagent_profiles"]));
  expect(first).not.toContain("get_subagent_output");
  expect(first).not.toContain("get_subagent_session");
  expect(afterDelegation).toEqual(expect.arrayContaining(["get_subagent_output", "get_subagent_session"]));
  expect(
    r.results.map((x) => [x.toolName, x.isError]),
    JSON.stringify(r.results.map((x) => x.text)),
  ).toEqual([
    ["list_subagent_profiles", false],
    ["delegate_to_subagents", false],
    ["get_subagent_output", false],
    ["delegate_to_subagents", false],
    ["get_subagent_session", false],
  ]);
  expect(r.results[2].text).toBe("Done: reach me");
  expect(r.results[4].text).toContain("read me");
  for (const t of r.registered) {
    expect(t.exposure, t.name).toBe(RETRIEVAL.includes(t.name) ? "deferred" : "direct");
    expect(t.annotations.readOnlyHint, t.name).toBe(RETRIEVAL.includes(t.name));
  }
}, 120_000);

test("pi 1.6 without a loader, in a folder where sub-agents of ours ran: output and transcript declared from the first request", async () => {
  // The test above ran sub-agents in this folder; a new pi session here (a background run's result to ask about).
  const r = await parent("current", [{ tool: "list_subagent_profiles", args: {} }], "folder-has-runs");
  const [first] = r.requests.map(toolsOf);
  expect(first).toEqual(expect.arrayContaining(["get_subagent_output", "get_subagent_session"]));
}, 120_000);

test("pi 1.6 with tool_search on: the retrieval tools stay undeclared until tool_search loads them", async () => {
  world.setSubagentSettings({}, { defaultTools: ["+tool_search"] });
  try {
    const r = await parent(
      "current",
      [
        { tool: "tool_search", args: { query: "sub-agent output by session id" } },
        { tool: "delegate_to_subagents", args: { tasks: [{ name: "b", prompt: "find me" }] } },
        { tool: "get_subagent_output", args: { sessionId: "{{lastSessionId}}" } },
      ],
      "toolsearch",
    );
    const [first, second] = r.requests.map(toolsOf);
    for (const name of RETRIEVAL) expect(first).not.toContain(name);
    expect(r.results[0].text).toContain("get_subagent_output");
    expect(second).toContain("get_subagent_output");
    expect(r.results.at(-1)).toMatchObject({ toolName: "get_subagent_output", isError: false, text: "Done: find me" });
  } finally {
    world.setSubagentSettings({});
  }
}, 120_000);

test("pi 1.5.2: all five declared from the first request, as before", async () => {
  const r = await parent("prior", [], "prior");
  expect(toolsOf(r.requests[0])).toEqual(expect.arrayContaining(["delegate_to_subagents", "subagent", ...RETRIEVAL]));
  for (const t of r.registered) expect(t.exposure, t.name).toBe("direct");
}, 120_000);

test("isError: a call none of whose tasks completed is an error; one with a task completed is not", async () => {
  const r = await runParentPi(world, {
    runtime: "node",
    steps: [
      {
        tool: "delegate_to_subagents",
        args: {
          tasks: [
            { name: "x", prompt: "x", profile: "nope" },
            { name: "y", prompt: "y", profile: "nope" },
          ],
        },
      },
      {
        tool: "delegate_to_subagents",
        args: {
          tasks: [
            { name: "ok", prompt: "fine" },
            { name: "z", prompt: "z", profile: "nope" },
          ],
        },
      },
      { tool: "subagent", args: { agent: "nope", task: "t" } },
      { text: "parent done" },
    ],
  });
  expect(r.code, r.stderr).toBe(0);
  const [allFailed, mixed, single] = r.results;
  expect(allFailed.isError).toBe(true);
  expect(allFailed.text).toMatch(/^✗ x: error — Unknown profile: "nope"/);
  expect(allFailed.details.windows.map((w: { status: string }) => w.status)).toEqual(["error", "error"]);
  expect(mixed.isError).toBe(false);
  expect(mixed.text).toContain("✓ ok: completed");
  expect(single.isError).toBe(true);
  expect(single.details.error.code).toBe("UNKNOWN_AGENT");
}, 120_000);

test("isError: a call whose tasks were all cancelled (subagents cancel --all from a terminal) is an error", async () => {
  const m = `cancelall-${Date.now()}`;
  const sleeper = (n: string) => ({
    name: n,
    prompt: `${m} ${n} ${script([{ tool: "bash", args: { command: "sleep 60" } }])}`,
  });
  const run = runParentPi(world, {
    runtime: "node",
    steps: [{ tool: "delegate_to_subagents", args: { tasks: [sleeper("p"), sleeper("q")] } }, { text: "parent done" }],
  });
  await until(
    "both children to run",
    async () => {
      const s = await cli(world, ["sessions", "--running"]);
      return (s.stdout.match(/ running /g) ?? []).length >= 2;
    },
    60_000,
  );
  expect((await cli(world, ["cancel", "--all"])).code).toBe(0);
  const r = await run;
  expect(r.code, r.stderr).toBe(0);
  expect(r.results[0].isError).toBe(true);
  expect(r.results[0].details.windows.map((w: { status: string }) => w.status)).toEqual(["cancelled", "cancelled"]);
}, 120_000);
