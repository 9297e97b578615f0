// End to end: the CLI runs the REAL pi (from node_modules) as its child, under Bun and under Node, against the
// scripted model server. Both transports. Nothing is mocked.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { script } from "../src/scripted/model-server.ts";
import { cli, piWorld, REPO, type PiWorld } from "./support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const summaryOf = (json: Record<string, any>[]) => {
  const last = json[json.length - 1];
  expect(last?.type).toBe("summary");
  return last.tasks as Record<string, any>[];
};

/** Every user/tool message text the model server saw in one request. */
const transcriptOf = (req: { messages?: { role: string; content?: unknown }[] }) =>
  (req.messages ?? []).map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`).join("\n");

for (const runtime of ["bun", "node"] as const) {
  describe(`run with ${runtime} children`, () => {
    test("bash then subagent_finalize: the finalized result is the output", async () => {
      world.setSubagentSettings({ childRuntime: runtime });
      const marker = `m-${runtime}-${Date.now()}`;
      const task = `Count files ${script([{ tool: "bash", args: { command: `echo ${marker}` } }, { finalize: { status: "SUCCESS", result: `result for ${marker}` } }])}`;
      const r = await cli(world, ["run", "default", task, "--json"]);
      expect(r.stderr).not.toContain("internal error");
      expect(r.code).toBe(0);
      const [t] = summaryOf(r.json);
      expect(t.status).toBe("completed");
      expect(t.output).toBe(`result for ${marker}`);
      expect(t.sessionId).toMatch(/^[0-9a-f]{16}$/);
      expect(t.usage.turns).toBe(2);
      // The bash tool really ran: its output went back to the model.
      const sawBash = world.server.requests.some((req) => (req.messages ?? []).some((m) => m.role === "tool" && JSON.stringify(m.content).includes(marker)));
      expect(sawBash).toBe(true);
      expect(r.json.some((e) => e.type === "tool_start" && e.tool === "bash")).toBe(true);

      const out = await cli(world, ["output", t.sessionId]);
      expect(out.code).toBe(0);
      expect(out.stdout.trim()).toBe(`result for ${marker}`);
    }, 60_000);

    test("a child that forgets to finalize is nudged in the same session, then succeeds", async () => {
      world.setSubagentSettings({ childRuntime: runtime });
      const marker = `forgot-${runtime}-${Date.now()}`;
      const task = `Do it ${marker} ${script([{ text: "I think I am done." }, { finalize: { status: "SUCCESS", result: `late ${marker}` } }])}`;
      const r = await cli(world, ["run", "default", task, "--json"]);
      const [t] = summaryOf(r.json);
      expect(t.status).toBe("completed");
      expect(t.output).toBe(`late ${marker}`);
      // The nudge arrived in the same conversation: the request that finalized still carries the task.
      const finalReq = world.server.requests.filter((req) => transcriptOf(req).includes(marker)).at(-1)!;
      const text = transcriptOf(finalReq);
      expect(text).toContain("I think I am done.");
      expect(text).toContain("subagent_finalize");
    }, 60_000);
  });
}

test("a provider error ends the run with status error and keeps the message", async () => {
  world.setSubagentSettings({});
  const r = await cli(world, ["run", "default", `fail ${script([{ status: 400, message: "scripted bad request 7731" }])}`, "--json"]);
  expect(r.code).toBe(1);
  const [t] = summaryOf(r.json);
  expect(t.status).toBe("error");
  expect(t.errorCode).toBe("SUBAGENT_FAILED");
  expect(t.error).toContain("scripted bad request 7731");
}, 60_000);

test("a child that never finalizes ends with FINALIZE_MISSING and its last text as partial output", async () => {
  world.setSubagentSettings({});
  const r = await cli(world, ["run", "default", `chat ${script([{ text: "draft one" }, { text: "draft two" }, { text: "draft three" }])}`, "--json"]);
  expect(r.code).toBe(1);
  const [t] = summaryOf(r.json);
  expect(t.errorCode).toBe("FINALIZE_MISSING");
  expect(t.output).toBe("draft three");
}, 60_000);

test("finalize: false takes the last assistant text as the output", async () => {
  world.setSubagentSettings({ finalize: false });
  const r = await cli(world, ["run", "default", `plain ${script([{ text: "plain answer 42" }])}`, "--json"]);
  const [t] = summaryOf(r.json);
  expect(t.status).toBe("completed");
  expect(t.output).toBe("plain answer 42");
  world.setSubagentSettings({});
}, 60_000);

for (const transport of ["compact", "json"] as const) {
  test(`resume continues the child's own context (${transport} transport)`, async () => {
    world.setSubagentSettings({ transport });
    const first = `remember the word ${transport}-zebra-${Date.now()}`;
    const r1 = await cli(world, ["run", "scout", `${first} ${script([{ finalize: { status: "SUCCESS", result: "noted" } }])}`, "--json"]);
    const [t1] = summaryOf(r1.json);
    expect(t1.status).toBe("completed");
    expect(t1.agent).toBe("scout");
    const r2 = await cli(world, ["run", "scout", `what was the word? ${script([{ finalize: { status: "SUCCESS", result: "the word" } }])}`, "--session", t1.sessionId, "--json"]);
    const [t2] = summaryOf(r2.json);
    expect(t2.status).toBe("completed");
    expect(t2.sessionId).toBe(t1.sessionId);
    const last = transcriptOf(world.server.requests.at(-1)!);
    expect(last).toContain(first);
    expect(last).toContain("what was the word?");

    const s = await cli(world, ["session", t1.sessionId]);
    expect(s.stdout).toContain("── Run 1/2 · completed");
    expect(s.stdout).toContain("── Run 2/2 · completed");
    const list = await cli(world, ["sessions", "--json"]);
    expect(list.json.some((row) => row.id === t1.sessionId)).toBe(true);
    world.setSubagentSettings({});
  }, 60_000);
}

test("the compiled binary runs a sub-agent end to end", async () => {
  const binary = join(REPO, "dist", "subagents");
  expect(existsSync(binary)).toBe(true);
  const r = await cli(world, ["run", "worker", `build ${script([{ finalize: { status: "SUCCESS", result: "binary ok" } }])}`, "--json"], { binary: true });
  expect(r.stderr).not.toContain("internal error");
  const [t] = summaryOf(r.json);
  expect(t.output).toBe("binary ok");
  const v = await cli(world, ["--version"], { binary: true });
  expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
}, 60_000);

test("usage errors exit 2 with a clear message", async () => {
  const r = await cli(world, ["run", "nope-profile", "x"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('Unknown profile: "nope-profile"');
  const r2 = await cli(world, ["run", "--timeout", "abc", "scout", "x"]);
  expect(r2.code).toBe(2);
  expect(r2.stderr).toContain("--timeout must be a positive number");
  const r3 = await cli(world, ["output", "0000000000000000"]);
  expect(r3.code).toBe(1);
  expect(r3.stderr).toContain('Session "0000000000000000" not found.');
});

test("resume without the child's session file falls back to the transcript prompt (Previously: … Instructions: …)", async () => {
  world.setSubagentSettings({});
  const first = `the secret word is heron-${Date.now()}`;
  const r1 = await cli(world, ["run", "scout", `${first} ${script([{ finalize: { status: "SUCCESS", result: "noted" } }])}`, "--json"]);
  const [t1] = summaryOf(r1.json);
  const { readdirSync, rmSync } = await import("node:fs");
  const dir = join(world.agentDir, "subagent-sessions");
  const files = readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith(`_${t1.sessionId}.jsonl`));
  expect(files).toHaveLength(1);
  rmSync(join(dir, files[0]));
  const r2 = await cli(world, ["run", "scout", "what was the word?", "--session", t1.sessionId, "--json"]);
  expect(summaryOf(r2.json)[0].status).toBe("completed");
  const prompt = JSON.stringify(world.server.requests.at(-1)!.messages);
  expect(prompt).toContain("Previously:");
  expect(prompt).toContain("--- Run 1 (completed,");
  expect(prompt).toContain(first);
  expect(prompt).toContain("Instructions:");
}, 60_000);
