// The same call through every front runs on the runtime it names: a task with `runtime: "codex"` given to a REAL
// parent pi (delegate_to_subagents, directly and through a saved workflow) runs on Codex exactly as
// `subagents delegate --tasks` and `subagents flow` run it — it used to run on pi inside pi. The codex here is a
// small script standing in for the Codex CLI (its `exec --json` stream); the real CLI is in e2e-runtimes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, piWorld, summaryOf, taskWhy, type PiWorld } from "../../support/pi-env.ts";
import { runParentPi } from "../../support/parent-pi.ts";

let world: PiWorld;
let bin: string;
let calls: string;

beforeAll(async () => {
  world = await piWorld();
  bin = join(world.root, "fake-codex-bin");
  calls = join(world.root, "codex-calls.log");
  mkdirSync(bin, { recursive: true });
  // Reads the task on stdin as `codex exec --json -` does and answers with Codex's event stream; each call is logged.
  const fake = [
    "#!/bin/sh",
    "prompt=$(cat)",
    `printf '%s\\n' "$*" >> '${calls}'`,
    `printf '%s\\n' '{"type":"thread.started","thread_id":"fake-thread"}' '{"type":"turn.started"}'`,
    `printf '{"type":"item.completed","item":{"id":"m1","type":"agent_message","text":"codex answered: %s"}}\\n' "$(printf '%s' "$prompt" | tr -d '"\\\\\\n' | cut -c1-60)"`,
    `printf '%s\\n' '{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":3}}'`,
  ].join("\n");
  writeFileSync(join(bin, "codex"), `${fake}\n`);
  chmodSync(join(bin, "codex"), 0o755);
  mkdirSync(join(world.agentDir, "workflows"), { recursive: true });
  writeFileSync(
    join(world.agentDir, "workflows", "on-codex.json"),
    JSON.stringify({ tasks: [{ name: "wf", prompt: "WF-CODEX {{input}}", runtime: "codex" }] }),
  );
});
afterAll(async () => {
  await world.close();
});

const env = () => ({ PATH: `${bin}:${world.env.PATH}` });
const codexCalls = () => (existsSync(calls) ? readFileSync(calls, "utf8").trim().split("\n") : []);
const piSaw = (marker: string) =>
  world.server.requests.filter((r) => JSON.stringify(r.messages).includes(marker)).length;

test("subagents delegate --tasks with runtime codex runs on codex (the reference)", async () => {
  const file = join(world.root, "tasks.json");
  writeFileSync(file, JSON.stringify({ tasks: [{ name: "cx", prompt: "CLI-CODEX hello", runtime: "codex" }] }));
  const before = codexCalls().length;
  const r = await cli(world, ["delegate", "--tasks", file, "--json"], { env: env() });
  const [t] = summaryOf(r.json);
  expect(r.code, taskWhy(t, r)).toBe(0);
  expect(t.output).toBe("codex answered: CLI-CODEX hello");
  expect(codexCalls().length).toBe(before + 1);
  expect(codexCalls().at(-1)).toContain("exec --json");
  expect(piSaw("CLI-CODEX")).toBe(0);
}, 90_000);

test("delegate_to_subagents in a real parent pi with runtime codex runs on codex, not on pi", async () => {
  const before = codexCalls().length;
  const r = await runParentPi(world, {
    runtime: "node",
    env: env(),
    steps: [
      { tool: "delegate_to_subagents", args: { tasks: [{ name: "cx", prompt: "PI-CODEX hello", runtime: "codex" }] } },
      { text: "parent done" },
    ],
  });
  expect(r.code, r.stderr.slice(-2000)).toBe(0);
  const [res] = r.results;
  expect(res.isError, res.text).toBe(false);
  expect(res.text).toContain("codex answered: PI-CODEX hello");
  expect(codexCalls().length).toBe(before + 1);
  // The parent's own request carries the marker in its tool call; no child pi was asked.
  expect(
    world.server.requests.filter(
      (q) =>
        JSON.stringify(q.messages).includes("PI-CODEX hello") &&
        !JSON.stringify(q.messages).includes("delegate_to_subagents"),
    ).length,
  ).toBe(0);
}, 120_000);

test("a saved workflow with runtime codex runs on codex from subagents flow and from delegate_to_subagents alike", async () => {
  const before = codexCalls().length;
  const flow = await cli(world, ["flow", "on-codex", "from-cli", "--json"], { env: env() });
  const [t] = summaryOf(flow.json);
  expect(flow.code, taskWhy(t, flow)).toBe(0);
  expect(t.output).toBe("codex answered: WF-CODEX from-cli");
  const r = await runParentPi(world, {
    runtime: "node",
    env: env(),
    steps: [{ tool: "delegate_to_subagents", args: { workflow: "on-codex from-pi" } }, { text: "parent done" }],
  });
  expect(r.code, r.stderr.slice(-2000)).toBe(0);
  const [res] = r.results;
  expect(res.isError, res.text).toBe(false);
  expect(res.text).toContain("codex answered: WF-CODEX from-pi");
  expect(codexCalls().length).toBe(before + 2);
}, 120_000);
