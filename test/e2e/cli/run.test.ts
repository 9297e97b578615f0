// End to end: the CLI runs the REAL pi as its child — the pi compiled into our executable (its pi role), and the
// user's pi from node_modules under Node 24 and under Bun — against the scripted model server. Both transports.
// Nothing is mocked.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, CURRENT_PI_RE, piWorld, REPO, type PiWorld, summaryOf, taskWhy } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

/** Every user/tool message text the model server saw in one request. */
const transcriptOf = (req: { messages?: { role: string; content?: unknown }[] }) =>
  (req.messages ?? [])
    .map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`)
    .join("\n");

/** The three ways a child pi runs: embedded (the default), and the user's pi under either runtime. */
const CHILD_PIS = {
  embedded: {},
  "system pi under node": { childPi: "system", childRuntime: "node" },
  "system pi under bun": { childPi: "system", childRuntime: "bun" },
} as const;

for (const [label, childSettings] of Object.entries(CHILD_PIS)) {
  const runtime = label.replace(/ /g, "-");
  describe(`run with ${label} children`, () => {
    test("bash then subagent_finalize: the finalized result is the output", async () => {
      world.setSubagentSettings(childSettings);
      const marker = `m-${runtime}-${Date.now()}`;
      const task = `Count files ${script([{ tool: "bash", args: { command: `echo ${marker}` } }, { finalize: { status: "SUCCESS", result: `result for ${marker}` } }])}`;
      const r = await cli(world, ["run", "default", task, "--json"]);
      expect(r.stderr).not.toContain("internal error");
      expect(r.code).toBe(0);
      const [t] = summaryOf(r.json);
      expect(t.status, taskWhy(t)).toBe("completed");
      expect(t.output).toBe(`result for ${marker}`);
      expect(t.sessionId).toMatch(/^[0-9a-f]{16}$/);
      expect(t.usage.turns).toBe(2);
      // The bash tool really ran: its output went back to the model.
      const sawBash = world.server.requests.some((req) =>
        (req.messages ?? []).some((m) => m.role === "tool" && JSON.stringify(m.content).includes(marker)),
      );
      expect(sawBash).toBe(true);
      expect(r.json.some((e) => e.type === "tool_start" && e.tool === "bash")).toBe(true);

      const out = await cli(world, ["output", t.sessionId]);
      expect(out.code).toBe(0);
      expect(out.stdout.trim()).toBe(`result for ${marker}`);
    }, 60_000);

    test("with finalize: true, a child that forgets to finalize is nudged in the same session, then succeeds", async () => {
      const marker = `forgot-${runtime}-${Date.now()}`;
      world.setSubagentSettings({ ...childSettings, finalize: true });
      const task = `Do it ${marker} ${script([{ text: "I think I am done." }, { finalize: { status: "SUCCESS", result: `late ${marker}` } }])}`;
      const r = await cli(world, ["run", "default", task, "--json"]);
      const [t] = summaryOf(r.json);
      expect(t.status, taskWhy(t)).toBe("completed");
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
  const r = await cli(world, [
    "run",
    "default",
    `fail ${script([{ status: 400, message: "scripted bad request 7731" }])}`,
    "--json",
  ]);
  expect(r.code).toBe(1);
  const [t] = summaryOf(r.json);
  expect(t.status).toBe("error");
  expect(t.errorCode).toBe("SUBAGENT_FAILED");
  expect(t.error).toContain("scripted bad request 7731");
}, 60_000);

test("with finalize: true, a child that never finalizes ends with FINALIZE_MISSING and its text from before the first nudge", async () => {
  world.setSubagentSettings({ finalize: true });
  const r = await cli(world, [
    "run",
    "default",
    `chat ${script([{ text: "draft one" }, { text: "draft two" }, { text: "draft three" }])}`,
    "--json",
  ]);
  world.setSubagentSettings({});
  expect(r.code).toBe(1);
  const [t] = summaryOf(r.json);
  expect(t.errorCode).toBe("FINALIZE_MISSING");
  expect(t.output).toBe("draft one");
}, 60_000);

test("finalize: false takes the last assistant text as the output", async () => {
  world.setSubagentSettings({ finalize: false });
  const r = await cli(world, ["run", "default", `plain ${script([{ text: "plain answer 42" }])}`, "--json"]);
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t)).toBe("completed");
  expect(t.output).toBe("plain answer 42");
  world.setSubagentSettings({});
}, 60_000);

for (const transport of ["compact", "json"] as const) {
  test(`resume continues the child's own context (${transport} transport)`, async () => {
    world.setSubagentSettings({ transport });
    const first = `remember the word ${transport}-zebra-${Date.now()}`;
    const r1 = await cli(world, [
      "run",
      "scout",
      `${first} ${script([{ finalize: { status: "SUCCESS", result: "noted" } }])}`,
      "--json",
    ]);
    const [t1] = summaryOf(r1.json);
    expect(t1.status, taskWhy(t1)).toBe("completed");
    expect(t1.agent).toBe("scout");
    const r2 = await cli(world, [
      "run",
      "scout",
      `what was the word? ${script([{ finalize: { status: "SUCCESS", result: "the word" } }])}`,
      "--session",
      t1.sessionId,
      "--json",
    ]);
    const [t2] = summaryOf(r2.json);
    expect(t2.status, taskWhy(t2)).toBe("completed");
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
  const r = await cli(
    world,
    ["run", "worker", `build ${script([{ finalize: { status: "SUCCESS", result: "binary ok" } }])}`, "--json"],
    { binary: true },
  );
  expect(r.stderr).not.toContain("internal error");
  const [t] = summaryOf(r.json);
  expect(t.output).toBe("binary ok");
  const v = await cli(world, ["--version"], { binary: true });
  expect(v.stdout.trim()).toMatch(
    new RegExp(`^subagents \\d+\\.\\d+\\.\\d+ · pi ${CURRENT_PI_RE} inside · commit [0-9a-f]{12}(-dirty)?$`),
  );
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
  const r1 = await cli(world, [
    "run",
    "scout",
    `${first} ${script([{ finalize: { status: "SUCCESS", result: "noted" } }])}`,
    "--json",
  ]);
  const [t1] = summaryOf(r1.json);
  const { readdirSync, rmSync } = await import("node:fs");
  const dir = join(world.agentDir, "subagent-sessions");
  const files = readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(`_${t1.sessionId}.jsonl`));
  expect(files).toHaveLength(1);
  rmSync(join(dir, files[0]));
  const r2 = await cli(world, ["run", "scout", "what was the word?", "--session", t1.sessionId, "--json"]);
  expect(summaryOf(r2.json)[0].status, taskWhy(summaryOf(r2.json)[0])).toBe("completed");
  const prompt = JSON.stringify(world.server.requests.at(-1)!.messages);
  expect(prompt).toContain("Previously:");
  expect(prompt).toContain("--- Run 1 (completed,");
  expect(prompt).toContain(first);
  expect(prompt).toContain("Instructions:");
}, 60_000);

test("a session started by the system pi is continued by the embedded pi, and the other way round", async () => {
  const { Database } = await import("bun:sqlite");
  const piOf = (id: string) => {
    const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
    const rows = db.query("SELECT pi FROM runs WHERE session_id = ? ORDER BY seq").all(id) as { pi: string }[];
    db.close();
    return rows.map((r) => r.pi);
  };
  for (const [first, second] of [
    ["system", "embedded"],
    ["embedded", "system"],
  ] as const) {
    const word = `${first}-then-${second}-${Date.now()}`;
    world.setSubagentSettings({ childPi: first, childRuntime: "node" });
    const r1 = await cli(
      world,
      ["run", "scout", `remember ${word} ${script([{ finalize: { status: "SUCCESS", result: "noted" } }])}`, "--json"],
      { binary: true },
    );
    const [t1] = summaryOf(r1.json);
    expect(t1.status, taskWhy(t1)).toBe("completed");
    world.setSubagentSettings({ childPi: second, childRuntime: "node" });
    const r2 = await cli(
      world,
      [
        "run",
        "scout",
        `which word? ${script([{ finalize: { status: "SUCCESS", result: "that one" } }])}`,
        "--session",
        t1.sessionId,
        "--json",
      ],
      { binary: true },
    );
    const [t2] = summaryOf(r2.json);
    expect(t2.status, taskWhy(t2)).toBe("completed");
    // The second pi continued the first one's session file: the model saw the first run's words.
    const last = world.server.requests.filter((q) => transcriptOf(q).includes("which word?")).at(-1)!;
    expect(transcriptOf(last)).toContain(word);
    const pis = piOf(t1.sessionId);
    expect(pis).toHaveLength(2);
    const [embedded, system] = first === "embedded" ? pis : [pis[1], pis[0]];
    expect(embedded).toMatch(new RegExp(`^pi ${CURRENT_PI_RE} · bun \\S+ · embedded \\(`));
    expect(system).toMatch(new RegExp(`^pi ${CURRENT_PI_RE} · node 24\\.\\d+\\.\\d+ · /`));
  }
  world.setSubagentSettings({});
}, 90_000);

test("the executable alone (copied to an empty folder, clean env, no node/bun/pi) runs `demo --json` to its summary", async () => {
  const { copyFileSync, mkdirSync, readdirSync } = await import("node:fs");
  const lone = join(world.root, "lone");
  mkdirSync(join(lone, "home"), { recursive: true });
  mkdirSync(join(lone, "work"), { recursive: true });
  copyFileSync(join(REPO, "dist", "subagents"), join(lone, "subagents"));
  const { chmodSync } = await import("node:fs");
  chmodSync(join(lone, "subagents"), 0o755);
  const proc = Bun.spawn({
    cmd: [join(lone, "subagents"), "demo", "--json"],
    cwd: join(lone, "work"),
    env: { HOME: join(lone, "home"), PATH: "/usr/bin:/bin", TERM: "dumb" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect(await proc.exited, stderr).toBe(0); // one demo task fails on purpose; the demo itself succeeded
  const last = JSON.parse(stdout.trim().split("\n").at(-1)!);
  expect(last.type).toBe("summary");
  expect(last.tasks.filter((t: { status: string }) => t.status === "completed")).toHaveLength(3);
  // pi's assets were written once into the cache folder of this version.
  expect(readdirSync(join(lone, "home", ".cache", "subagents"))).toEqual([expect.stringMatching(/^\d+\.\d+\.\d+$/)]);
}, 60_000);

test("the pi role's switch and our JIT settings never reach what the child runs; the user's own JSC settings do", async () => {
  world.setSubagentSettings({});
  const echo =
    "echo role=[$SUBAGENTS_ROLE] jit=[$SUBAGENTS_CHILD_JIT/$BUN_JSC_thresholdForOptimizeAfterWarmUp/$BUN_JSC_thresholdForOptimizeSoon]";
  const seen = async (label: string, env: Record<string, string> = {}) => {
    const task = `env check ${label} ${script([{ tool: "bash", args: { command: `${echo} ${label}` } }, { finalize: { status: "SUCCESS", result: "checked" } }])}`;
    const r = await cli(world, ["run", "default", task, "--json"], { binary: true, env });
    expect(summaryOf(r.json)[0].status, taskWhy(summaryOf(r.json)[0])).toBe("completed");
    const toolResult = world.server.requests
      .flatMap((q) => q.messages ?? [])
      .filter((m) => m.role === "tool" && JSON.stringify(m.content).includes(`] ${label}`));
    expect(toolResult.length).toBeGreaterThan(0);
    return JSON.stringify(toolResult.at(-1)!.content);
  };
  expect(await seen("plain")).toContain("role=[] jit=[//] plain");
  // A user who tunes JavaScriptCore keeps exactly their settings, in the child and in what it runs.
  expect(await seen("tuned", { BUN_JSC_thresholdForOptimizeSoon: "777" })).toContain("role=[] jit=[//777] tuned");
}, 60_000);

test("a child keeps the user's APPEND_SYSTEM.md and gets our finalize instructions after it", async () => {
  const { writeFileSync, rmSync } = await import("node:fs");
  const mark = `USER-APPEND-${Date.now()}`;
  writeFileSync(join(world.agentDir, "APPEND_SYSTEM.md"), `Always sign with ${mark}.\n`);
  try {
    for (const childPi of ["embedded", "system"]) {
      world.setSubagentSettings({ childPi });
      const task = `append check ${childPi} ${mark} ${script([{ finalize: { status: "SUCCESS", result: "ok" } }])}`;
      const r = await cli(world, ["run", "default", task, "--json"]);
      expect(summaryOf(r.json)[0].status, taskWhy(summaryOf(r.json)[0])).toBe("completed");
      const req = world.server.requests.find((q) => transcriptOf(q).includes(`append check ${childPi}`))!;
      const system = (req.messages ?? [])
        .filter((m) => m.role === "system" || m.role === "developer")
        .map((m) => JSON.stringify(m.content))
        .join("");
      expect(system).toContain(`Always sign with ${mark}.`);
      expect(system.indexOf("subagent_finalize")).toBeGreaterThan(system.indexOf(mark));
    }
  } finally {
    rmSync(join(world.agentDir, "APPEND_SYSTEM.md"), { force: true });
    world.setSubagentSettings({});
  }
}, 60_000);
