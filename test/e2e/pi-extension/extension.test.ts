// The pi extension end to end: a REAL parent pi — current pi (1.x) and the old 0.73.1, each under Node and
// Bun — loads dist/extension.js, the scripted model calls our tools, and the children are real pi processes
// on the same scripted server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { script, type ScriptStep } from "../../../src/scripted/model-server.ts";
import { piCmd, piWorld, REPO, type PiRelease, type PiWorld, until, taskWhy } from "../../support/pi-env.ts";
import { EXTENSION, runParentPi, type ToolResultEntry } from "../../support/parent-pi.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

/** Runs a parent pi with our extension; returns the tool results it recorded in its session file. */
const parentPi = (
  runtime: "node" | "bun",
  steps: ScriptStep[],
  env: Record<string, string> = {},
  release: PiRelease = "current",
  args: string[] = [],
) => runParentPi(world, { runtime, steps, env, release, args });

for (const runtime of ["node", "bun"] as const) {
  test(`old pi 0.73.1 under ${runtime} as the parent: delegates two tasks to its own pi (childPi system)`, async () => {
    // By default children run the newer pi of the executable beside the bundle; "system" keeps them on this one.
    world.setSubagentSettings({ childPi: "system" });
    const r = await parentPi(
      runtime,
      [
        {
          tool: "delegate_to_subagents",
          args: {
            tasks: [
              { name: "one", prompt: "old first" },
              { name: "two", prompt: "old second" },
            ],
          },
        },
        { text: "parent done" },
      ],
      {},
      "old",
    ).finally(() => world.setSubagentSettings({}));
    expect(r.code, r.stderr).toBe(0);
    const [res] = r.results;
    expect(res.text).toMatch(/^✓ one: completed \(session: [0-9a-f]{16}\)\n✓ two: completed/);
    expect(res.text).toContain("Done: old first");
    expect(res.text).toContain("Done: old second");
    // Its children ran pi 0.73.1 too (children run the parent's own pi), and the record says so. Under Node 20
    // the store is in memory, so the record is checked where there is a database.
    if (runtime === "bun") {
      const { Database } = await import("bun:sqlite");
      const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
      const row = db.query("SELECT pi FROM runs WHERE prompt = 'old first' ORDER BY id DESC LIMIT 1").get() as {
        pi: string;
      };
      db.close();
      expect(row.pi).toMatch(/^pi 0\.73\.1 · bun \d/);
    }
  }, 90_000);

  describe(`current pi under ${runtime} as the parent`, () => {
    test("delegate_to_subagents with two tasks returns status lines and both outputs", async () => {
      const r = await parentPi(runtime, [
        {
          tool: "delegate_to_subagents",
          args: {
            tasks: [
              { name: "alpha", prompt: "first job" },
              { name: "beta", prompt: "second job", timeout: "600" },
            ],
          },
        },
        { text: "parent done" },
      ]);
      expect(r.code).toBe(0);
      const [res] = r.results;
      expect(res.toolName).toBe("delegate_to_subagents");
      expect(res.isError).toBe(false);
      expect(res.text).toMatch(
        /^✓ alpha: completed \(session: [0-9a-f]{16}\)\n✓ beta: completed \(session: [0-9a-f]{16}\)/,
      );
      expect(res.text).toContain("Done: first job");
      expect(res.text).toContain("Done: second job");
      expect(res.details.status).toBe("done");
      expect(res.details.sessionIds).toHaveLength(2);
      expect(res.details.windows.map((w: { status: string }) => w.status)).toEqual(["completed", "completed"]);
    }, 90_000);

    test("get_subagent_output, get_subagent_session and list_subagent_profiles", async () => {
      // Node 20 has no node:sqlite: the store is in memory there, so everything happens in one parent run.
      const r = await parentPi(runtime, [
        {
          tool: "delegate_to_subagents",
          args: { tasks: [{ name: "scout", prompt: "seeded output please", profile: "scout" }] },
        },
        {
          tools: [
            { name: "get_subagent_output", args: { sessionId: "{{lastSessionId}}" } },
            { name: "get_subagent_session", args: { sessionId: "{{lastSessionId}}" } },
            { name: "list_subagent_profiles", args: {} },
            { name: "get_subagent_output", args: { sessionId: "0123456789abcdef" } },
          ],
        },
        { text: "done" },
      ]);
      const [delegated, output, session, profiles, missing] = r.results;
      const id = delegated.details.sessionIds[0];
      expect(output.text).toBe("Done: seeded output please");
      expect(output.details).toMatchObject({ sessionId: id, status: "completed", taskName: "scout", runCount: 1 });
      expect(session.text).toContain("subagent_finalize");
      expect(session.details.runCount).toBe(1);
      expect(profiles.text).toContain("scout — ");
      expect(profiles.details.count).toBeGreaterThanOrEqual(4);
      expect(missing.isError).toBe(true);
      expect(missing.text).toContain(
        'Session "0123456789abcdef" not found. The session may have expired or the ID is incorrect.',
      );
    }, 90_000);

    test("subagent returns the status header, details {mode, runId, results, sessionId, finalized}, and continues its session", async () => {
      const r = await parentPi(runtime, [
        { tool: "subagent", args: { agent: "scout", task: "look around" } },
        { text: "ok" },
      ]);
      const [res] = r.results;
      expect(res.text).toMatch(
        /^\*\*Status:\*\* SUCCESS\n\*\*Session ID:\*\* `[0-9a-f]{16}`\n\n---\n\nDone: look around/,
      );
      expect(res.details.mode).toBe("single");
      expect(res.details.results[0]).toMatchObject({
        agent: "scout",
        task: "look around",
        exitCode: 0,
        output: "Done: look around",
      });
      expect(res.details.finalized).toEqual({ status: "SUCCESS", result: "Done: look around" });
      expect(Object.keys(res.details.results[0].usage).sort()).toEqual([
        "cacheRead",
        "cacheWrite",
        "cost",
        "input",
        "output",
        "turns",
      ]);
      const again = await parentPi(runtime, [
        { tool: "subagent", args: { agent: "scout", task: "first part" } },
        { tool: "subagent", args: { agent: "scout", task: "keep going", sessionId: "{{lastSessionId}}" } },
        { text: "ok" },
      ]);
      const [first, second] = again.results;
      expect(second.details.sessionId).toBe(first.details.sessionId);
      expect(second.text).toContain("Done: keep going");
      // The child kept its context: the request that answered "keep going" still carries "first part".
      const req = world.server.requests.filter((q) => JSON.stringify(q.messages).includes("keep going")).at(-1)!;
      expect(JSON.stringify(req.messages)).toContain("first part");
      const unknown = await parentPi(runtime, [
        { tool: "subagent", args: { agent: "nobody", task: "x" } },
        { text: "ok" },
      ]);
      expect(unknown.results[0].details.error.code).toBe("UNKNOWN_AGENT");
      expect(unknown.results[0].text).toContain(
        "Unknown agent: nobody. Available agents: planner, reviewer, scout, worker",
      );
    }, 90_000);

    test("invalid parameters and unknown profiles get clear errors", async () => {
      const r = await parentPi(runtime, [
        {
          tools: [
            { name: "delegate_to_subagents", args: { tasks: [{ name: "a", prompt: "p", cwd: "relative/dir" }] } },
            {
              name: "delegate_to_subagents",
              args: {
                tasks: [
                  { name: "ok", prompt: "fine" },
                  { name: "bad", prompt: "p", profile: "ghost" },
                ],
              },
            },
          ],
        },
        { text: "ok" },
      ]);
      const [rel, mixed] = r.results;
      expect(rel.isError).toBe(true);
      expect(rel.text).toContain("cwd must be an absolute path");
      expect(mixed.text).toContain("✓ ok: completed");
      expect(mixed.text).toContain(
        '✗ bad: error — Unknown profile: "ghost". Available profiles: planner, reviewer, scout, worker',
      );
    }, 90_000);
  });
}

test("subagent sessions are sticky across pi sessions and stores: the child's session file is resumed; a caller-chosen id starts one", async () => {
  const first = await parentPi("node", [
    { tool: "subagent", args: { agent: "scout", task: "remember the word okapi-4417" } },
    { text: "ok" },
  ]);
  const id = first.results[0].details.sessionId;
  expect(first.results[0].details.error).toBeUndefined();
  // A new parent pi with a store that never saw the id (as under a Node pi without node:sqlite, whose store lives
  // in memory, or another machine's database): the id still continues the same child context.
  const second = await parentPi(
    "node",
    [{ tool: "subagent", args: { agent: "scout", task: "which word was it?", sessionId: id } }, { text: "ok" }],
    { SUBAGENTS_DB: join(world.root, "another.db") },
  );
  const [res] = second.results;
  expect(res.details.error).toBeUndefined();
  expect(res.details.sessionId).toBe(id);
  expect(res.text).toStartWith("**Status:** SUCCESS");
  // The child's request (it has subagent_finalize) still carries the first task.
  const isChild = (q: (typeof world.server.requests)[number]) =>
    (q.tools ?? []).some((t) => t.function?.name === "subagent_finalize");
  const req = world.server.requests
    .filter((q) => isChild(q) && JSON.stringify(q.messages).includes("which word was it?"))
    .at(-1)!;
  expect(JSON.stringify(req.messages)).toContain("okapi-4417");

  const chosen = "550e8400-e29b-41d4-a716-446655440000";
  const fresh = await parentPi("node", [
    { tool: "subagent", args: { agent: "scout", task: "a fresh start", sessionId: chosen } },
    { text: "ok" },
  ]);
  expect(fresh.results[0].details.error).toBeUndefined();
  expect(fresh.results[0].details.sessionId).toBe(chosen);
  expect(fresh.results[0].details.results[0].sessionFile).toEndWith(`/scout_${chosen}.jsonl`);
  const bad = await parentPi("node", [
    { tool: "subagent", args: { agent: "scout", task: "x", sessionId: "../../etc/x" } },
    { text: "ok" },
  ]);
  expect(bad.results[0].details.error.code).toBe("INVALID_INPUT");
}, 90_000);

test("delegate_to_subagents in a real parent pi: a child that answers in plain text is completed with that answer", async () => {
  const before = world.server.requests.length;
  const r = await parentPi("bun", [
    {
      tool: "delegate_to_subagents",
      args: { tasks: [{ name: "p", prompt: `plain ${script([{ text: "plain via pi 8080" }])}` }] },
    },
    { text: "ok" },
  ]);
  const [res] = r.results;
  expect(res.isError).toBe(false);
  expect(res.text).toMatch(/^✓ p: completed \(session: [0-9a-f]{16}\)/);
  expect(res.text).toContain("plain via pi 8080");
  // Parent: 2 model calls; child: 1 — no corrective message.
  expect(world.server.requests.length - before).toBe(3);
}, 60_000);

test("a deny list subtracts from the parent's active tools: a read-only parent never hands a child write tools", async () => {
  const { mkdirSync, writeFileSync, rmSync } = await import("node:fs");
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "nobash.md"),
    "---\nname: nobash\ndescription: no shell\ndenied_tools: bash\n---\nYou never use a shell.\n",
  );
  try {
    const before = world.server.requests.length;
    const r = await parentPi(
      "bun",
      [
        {
          tool: "delegate_to_subagents",
          args: { tasks: [{ name: "t", prompt: "deny list child 5521", profile: "nobash" }] },
        },
        { text: "ok" },
      ],
      {},
      "current",
      ["--tools", "read,grep,find,ls,bash,delegate_to_subagents"],
    );
    expect(r.results[0].text).toContain("✓ t: completed");
    const child = world.server.requests
      .slice(before)
      .find(
        (q) =>
          JSON.stringify(q.messages).includes("deny list child 5521") &&
          (q.tools ?? []).some((t) => t.function?.name === "subagent_finalize"),
      )!;
    const names = (child.tools ?? []).map((t) => t.function?.name).sort();
    // A parent pi without a UI (-p): nobody can answer, so the child has no ask_parent.
    expect(names).toEqual(["find", "grep", "ls", "read", "subagent_finalize"]);
  } finally {
    rmSync(join(agents, "nobash.md"), { force: true });
  }
}, 60_000);

test("a child at max depth gets no delegation tools, even with the extension loaded", async () => {
  const before = world.server.requests.length;
  const r = await parentPi("bun", [{ text: "nothing to do" }], { PI_SUBAGENT_CHILD: "1", PI_SUBAGENT_DEPTH: "1" });
  expect(r.code).toBe(0);
  const req = world.server.requests.slice(before).at(-1)!;
  const names = (req.tools ?? []).map((t) => t.function?.name);
  expect(names).not.toContain("delegate_to_subagents");
  expect(names).not.toContain("subagent");
}, 60_000);

test("SIGTERM to the parent pi stops its sub-agents and their commands", async () => {
  const tag = `${Date.now() % 100000}.${Math.floor(Math.random() * 1000)}`;
  const sessionFile = join(world.root, `parent-term-${tag}.jsonl`);
  const inner = `[[script:[{"tool":"bash","args":{"command":"sleep 5${tag}"}}]]]`;
  const proc = Bun.spawn({
    cmd: [...piCmd("current", "bun"), "-p", "--session", sessionFile, "-e", EXTENSION],
    cwd: world.workDir,
    env: world.env,
    stdin: new TextEncoder().encode(
      `parent ${script([{ tool: "delegate_to_subagents", args: { tasks: [{ name: "sleeper", prompt: `sleep please ${inner}` }] } }])}`,
    ),
    stdout: "ignore",
    stderr: "ignore",
  });
  const sleeping = () => spawnSync("pgrep", ["-f", `^sleep 5${tag}`], { encoding: "utf8" }).stdout.trim();
  await until("the child's sleep running", sleeping);
  expect(sleeping()).not.toBe("");
  proc.kill("SIGTERM");
  await proc.exited;
  await until("the child's sleep gone", () => !sleeping(), 30_000).catch(() => {}); // the expect below says what is left
  expect(sleeping()).toBe("");
}, 60_000);

test("installed with `subagents install`, pi auto-discovers the extension; its children still cannot delegate", async () => {
  const bin = join(REPO, "dist", "subagents");
  const install = spawnSync(bin, ["install"], { env: world.env, encoding: "utf8" });
  expect(install.status).toBe(0);
  try {
    const sessionFile = join(world.root, `auto-${Date.now()}.jsonl`);
    const before = world.server.requests.length;
    const proc = Bun.spawn({
      cmd: [...piCmd("current", "bun"), "-p", "--session", sessionFile],
      cwd: world.workDir,
      env: world.env,
      stdin: new TextEncoder().encode(
        `auto ${script([{ tool: "delegate_to_subagents", args: { tasks: [{ name: "kid", prompt: "child work" }] } }, { text: "ok" }])}`,
      ),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await proc.exited).toBe(0);
    const requests = world.server.requests.slice(before);
    const toolsOf = (q: (typeof requests)[number]) => (q.tools ?? []).map((t) => t.function?.name);
    // The parent got our tools by discovery alone…
    expect(toolsOf(requests[0])).toContain("delegate_to_subagents");
    // …and the child (which discovered the same file) did not.
    const child = requests.find(
      (q) => JSON.stringify(q.messages).includes("child work") && toolsOf(q).includes("subagent_finalize"),
    )!;
    expect(child).toBeDefined();
    expect(toolsOf(child)).not.toContain("delegate_to_subagents");
    expect(toolsOf(child)).not.toContain("subagent");
    // `install` recorded the binary: children inside pi ran the pi compiled into it.
    const { Database } = await import("bun:sqlite");
    const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
    const row = db.query("SELECT pi FROM runs WHERE prompt = 'child work' ORDER BY id DESC LIMIT 1").get() as {
      pi: string;
    };
    db.close();
    expect(row.pi).toContain(`embedded (${bin})`);
  } finally {
    expect(spawnSync(bin, ["install", "--uninstall"], { env: world.env }).status).toBe(0);
  }
}, 60_000);

test("a restarted parent (Node pi: memory store) rebuilds its sub-agents from the session file; a stale running one is interrupted", async () => {
  const sessionFile = join(world.root, `rebuild-${Date.now()}.jsonl`);
  const run = async (steps: ScriptStep[]) => {
    const proc = Bun.spawn({
      cmd: [...piCmd("old", "node"), "-p", "--session", sessionFile, "-e", EXTENSION],
      cwd: world.workDir,
      env: world.env,
      stdin: new TextEncoder().encode(`again ${script(steps)}`),
      stdout: "ignore",
      stderr: "ignore",
    });
    expect(await proc.exited).toBe(0);
  };
  await run([
    { tool: "delegate_to_subagents", args: { tasks: [{ name: "kept", prompt: "remember me" }] } },
    { text: "ok" },
  ]);
  // Fake a parent that died mid-task: a "running" mirror entry with no end entry.
  const lines = readFileSync(sessionFile, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const mirror = lines.filter((e) => e.type === "custom" && e.customType === "pi-subagents").at(-1);
  expect(mirror.data.status, taskWhy(mirror.data)).toBe("completed");
  const staleId = "feedfacefeedface";
  const stale = {
    ...mirror,
    id: "stale001",
    parentId: lines.at(-1).id,
    data: { ...mirror.data, sessionId: staleId, status: "running", output: undefined },
  };
  const { appendFileSync } = await import("node:fs");
  appendFileSync(sessionFile, `${JSON.stringify(stale)}\n`);
  const before = world.server.requests.length;
  await run([
    {
      tools: [
        { name: "get_subagent_output", args: { sessionId: mirror.data.sessionId } },
        { name: "get_subagent_session", args: { sessionId: staleId } },
      ],
    },
    { text: "ok" },
  ]);
  const results: ToolResultEntry[] = [];
  for (const line of readFileSync(sessionFile, "utf8").trim().split("\n")) {
    const e = JSON.parse(line);
    if (e.type === "message" && e.message?.role === "toolResult")
      results.push({
        toolName: e.message.toolName,
        text: e.message.content.map((c: { text?: string }) => c.text ?? "").join(""),
        details: e.message.details,
        isError: e.message.isError,
      });
  }
  const [output, staleSession] = results.slice(-2);
  expect(output.text).toBe("Done: remember me");
  expect(staleSession.details.status).toBe("error");
  expect(staleSession.text).toContain("Session was interrupted (main agent session ended unexpectedly)");
  expect(world.server.requests.length).toBeGreaterThan(before);
}, 60_000);

test("project-local profiles: refused without a UI unless projectAgents allows them; never with an apiKey", async () => {
  const { mkdirSync, writeFileSync } = await import("node:fs");
  const agents = join(world.workDir, ".pi", "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "repo-helper.md"),
    "---\nname: repo-helper\ndescription: Helps with this repo\n---\nYou help with this repo.\n",
  );
  writeFileSync(
    join(agents, "sneaky.md"),
    "---\nname: sneaky\ndescription: Tries to pick the key\napiKey: stolen\n---\nx\n",
  );
  try {
    const ask = await parentPi("bun", [
      { tool: "delegate_to_subagents", args: { tasks: [{ name: "t", prompt: "hi", profile: "repo-helper" }] } },
      { text: "ok" },
    ]);
    // That task fails (headless: nobody to ask); it was the call's only task, so the call is an error too.
    expect(ask.results[0].isError).toBe(true);
    expect(ask.results[0].text).toContain('✗ t: error — Project-local profile "repo-helper"');
    expect(ask.results[0].text).toContain("needs consent");
    world.setSubagentSettings({ projectAgents: "allow" });
    const allowed = await parentPi("bun", [
      {
        tool: "delegate_to_subagents",
        args: {
          tasks: [
            { name: "t", prompt: "hi", profile: "repo-helper" },
            { name: "s", prompt: "hi", profile: "sneaky" },
          ],
        },
      },
      { text: "ok" },
    ]);
    expect(allowed.results[0].text).toContain("✓ t: completed");
    // A project profile with an apiKey never loads; the task says why.
    expect(allowed.results[0].text).toContain('✗ s: error — Profile "sneaky" (');
    expect(allowed.results[0].text).toContain('cannot be used: project profiles cannot set "apiKey"');
  } finally {
    world.setSubagentSettings({});
    const { rmSync } = await import("node:fs");
    rmSync(join(world.workDir, ".pi"), { recursive: true, force: true });
  }
}, 60_000);

test("onUpdate stays within 10 per second while a real child streams 5,000 deltas", async () => {
  const { delegateTool } = await import("../../../src/pi/tool-delegate.ts");
  const { makeToolEnv } = await import("../../../src/pi/tool-env.ts");
  const { createServices } = await import("../../../src/pi/services.ts");
  for (const [k, v] of Object.entries(world.env)) process.env[k] = v;
  const tool = delegateTool(makeToolEnv({ services: createServices, appendEntry: () => {} }));
  const stamps: number[] = [];
  const prompt = `stream ${script([{ text: "z".repeat(20_000), chunks: 5000, chunkDelayMs: 1, finalize: { status: "SUCCESS", result: "streamed" } }])}`;
  const result = (await tool.execute(
    "t",
    { tasks: [{ name: "s", prompt }] },
    undefined,
    () => stamps.push(performance.now()),
    { cwd: world.workDir, hasUI: false },
  )) as { content: { text: string }[] };
  expect(result.content[0].text).toContain("✓ s: completed");
  expect(stamps.length).toBeGreaterThan(5);
  for (let i = 0, j = 0; j < stamps.length; j++) {
    while (stamps[j] - stamps[i] > 1000) i++;
    expect(j - i + 1).toBeLessThanOrEqual(10);
  }
}, 60_000);

test("`pi install <this checkout>` (the package.json pi manifest) gives pi our tools", async () => {
  const install = spawnSync(piCmd("current", "node")[0], [piCmd("current", "node")[1], "install", REPO], {
    env: world.env,
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(install.status).toBe(0);
  try {
    const before = world.server.requests.length;
    const proc = Bun.spawn({
      cmd: [...piCmd("current", "node"), "-p", "--no-session"],
      cwd: world.workDir,
      env: world.env,
      stdin: new TextEncoder().encode(`hi ${script([{ text: "ok" }])}`),
      stdout: "ignore",
      stderr: "pipe",
    });
    const stderr = await new Response(proc.stderr).text();
    expect(await proc.exited, stderr).toBe(0);
    const names = (world.server.requests.slice(before)[0].tools ?? []).map((t) => t.function?.name);
    // pi 1.6 declares the retrieval tools that fetch by session id once there are sessions (tool-exposure.ts).
    expect(names).toEqual(expect.arrayContaining(["delegate_to_subagents", "list_subagent_profiles", "subagent"]));
  } finally {
    spawnSync(piCmd("current", "node")[0], [piCmd("current", "node")[1], "remove", REPO], {
      env: world.env,
      timeout: 60_000,
    });
  }
}, 90_000);

test("settings choose which tools are registered", async () => {
  world.setSubagentSettings({ tools: ["subagent", "get_subagent_output"] });
  try {
    // pi 1.5.2 declares every registered tool from the first request; pi 1.6 declares get_subagent_output (deferred)
    // once there are sub-agents to ask about — the folder's runs or a delegation — so the parent runs in a folder of
    // its own (the world's folder has the other tests' runs).
    const fresh = join(world.root, `no-runs-${Date.now()}`);
    mkdirSync(fresh, { recursive: true });
    for (const release of ["prior", "current"] as const) {
      const before = world.server.requests.length;
      const r = await runParentPi(world, { runtime: "bun", steps: [{ text: "ok" }], release, cwd: fresh });
      expect(r.code).toBe(0);
      const names = (world.server.requests.slice(before)[0].tools ?? []).map((t) => t.function?.name);
      expect(names).toContain("subagent");
      expect(names.includes("get_subagent_output")).toBe(release === "prior");
      expect(names).not.toContain("delegate_to_subagents");
      expect(names).not.toContain("list_subagent_profiles");
    }
  } finally {
    world.setSubagentSettings({});
  }
}, 60_000);

test("children carry the parent's project-trust decision (current pi skips an untrusted folder's .pi files in -p mode)", async () => {
  const { mkdirSync, writeFileSync, rmSync } = await import("node:fs");
  // A project skill: trust-gated, and listed with its description in the system prompt of a pi that loads it.
  mkdirSync(join(world.workDir, ".pi", "skills", "trust-mark"), { recursive: true });
  const mark = `TRUSTMARK${Date.now()}`;
  writeFileSync(
    join(world.workDir, ".pi", "skills", "trust-mark", "SKILL.md"),
    `---\nname: trust-mark\ndescription: Project skill ${mark}\n---\nBody.\n`,
  );
  const systemOf = (q: (typeof world.server.requests)[number]) =>
    JSON.stringify((q.messages ?? []).filter((m) => m.role === "system" || m.role === "developer"));
  try {
    for (const [flag, expected] of [
      ["--approve", true],
      ["--no-approve", false],
    ] as const) {
      const task = `trust task ${flag}`;
      const r = await parentPi(
        "bun",
        [{ tool: "delegate_to_subagents", args: { tasks: [{ name: "t", prompt: task }] } }, { text: "ok" }],
        {},
        "current",
        [flag],
      );
      expect(r.results[0].text).toContain("✓ t: completed");
      const child = world.server.requests.find(
        (q) =>
          JSON.stringify(q.messages).includes(task) && !JSON.stringify(q.messages).includes("delegate_to_subagents"),
      )!;
      expect(child).toBeDefined();
      expect(systemOf(child).includes(mark)).toBe(expected);
    }
  } finally {
    rmSync(join(world.workDir, ".pi"), { recursive: true, force: true });
  }
}, 90_000);
