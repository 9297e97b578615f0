// `subagents mcp` (docs/mcp.md) with the official MCP TypeScript SDK's client, on the 2026-07-28 revision and on a
// 2025 `initialize` connection: the five tools with the pi front's schemas, a two-task delegation with progress,
// cancellation and a client that goes away (no process left), children's questions answered through
// elicitation, the client's roots, and a terminal reaching the server's runs (sessions, steer).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TASKS_OUTPUT_SCHEMA } from "../../../src/core/call/results.ts";
import { DELEGATE_SCHEMA, OUTPUT_SCHEMA, SUBAGENT_SCHEMA } from "../../../src/core/call/schemas.ts";
import { processesWithEnv } from "../../../src/host/proc-marks.ts";
import { messageText, script } from "../../../src/scripted/model-server.ts";
import { connectMcp, ERAS } from "../../support/mcp-client.ts";
import { cli, piWorld, type PiWorld, until } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

type Structured = {
  tasks: Record<string, any>[];
  usage: Record<string, number>;
  error?: { code: string; message: string };
};
const textOf = (r: { content?: unknown }) => ((r.content as { text?: string }[] | undefined) ?? [])[0]?.text ?? "";

/** Processes of this world other than the MCP server itself (its children, what their commands started). */
const childrenOf = (serverPid: number) =>
  processesWithEnv("SUBAGENTS_TEST_WORLD")
    .filter((p) => p.value === world.root && p.pid !== serverPid)
    .map((p) => p.pid);

/** A bash step that holds the child until the test creates `file` (nothing here depends on the machine's speed). */
const holdUntil = (file: string) => ({ tool: "bash", args: { command: `until [ -e ${file} ]; do sleep 0.1; done` } });

/** The tool results the scripted model received (what the children's tools returned). */
const toolResults = () =>
  world.server.requests.flatMap((q) => (q.messages ?? []).filter((m) => m.role === "tool").map(messageText));

for (const era of ERAS)
  test(`${era}: the five tools, with the pi extension's parameter schemas and an output schema for the two that run children`, async () => {
    const c = await connectMcp(world, { era });
    try {
      expect(c.client.getProtocolEra()).toBe(era);
      const { tools } = await c.client.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      expect([...byName.keys()].sort()).toEqual([
        "delegate_to_subagents",
        "get_subagent_output",
        "get_subagent_session",
        "list_subagent_profiles",
        "subagent",
      ]);
      // pi's schemas, less what MCP does not do: no forked context, no background notices.
      const delegate = byName.get("delegate_to_subagents")!;
      const taskFields = (delegate.inputSchema as any).properties.tasks.items.properties;
      expect(Object.keys(taskFields).sort()).toEqual(
        Object.keys((DELEGATE_SCHEMA as any).properties.tasks.items.properties)
          .filter((k) => k !== "context")
          .sort(),
      );
      expect(byName.get("get_subagent_output")!.inputSchema).toEqual(OUTPUT_SCHEMA as never);
      expect(Object.keys((byName.get("subagent")!.inputSchema as any).properties)).toEqual(
        Object.keys(SUBAGENT_SCHEMA.properties),
      );
      expect(JSON.stringify(tools)).not.toMatch(/fork|notices? follow/);
      expect(delegate.outputSchema).toEqual(TASKS_OUTPUT_SCHEMA as never);
      expect(delegate.description).toContain("Sub-agents see none of this conversation: put paths");
      // Titles, and the annotations pi's tools have.
      expect(delegate.title).toBe("Delegate to sub-agents");
      expect(delegate.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
      expect(byName.get("get_subagent_session")!.annotations).toMatchObject({ readOnlyHint: true });
      const profiles = await c.client.callTool({ name: "list_subagent_profiles", arguments: {} });
      expect(textOf(profiles)).toContain("scout");
      // The MCP front lives in the executable only: the pi extension bundle has none of it.
      expect(readFileSync(join(import.meta.dir, "..", "..", "..", "dist", "extension.js"), "utf8")).not.toContain(
        "server/discover",
      );
    } finally {
      await c.close();
    }
  }, 60_000);

test("stdout carries protocol messages only: every line a server writes is JSON-RPC, a bad call included", async () => {
  const proc = Bun.spawn({
    cmd: [join(import.meta.dir, "..", "..", "..", "dist", "subagents"), "mcp"],
    cwd: world.workDir,
    env: world.env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const send = (m: unknown) => proc.stdin.write(`${JSON.stringify(m)}\n`);
  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "delegate_to_subagents", arguments: { tasks: [] } },
  });
  send({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "get_subagent_output", arguments: { sessionId: "nope" } },
  });
  await proc.stdin.end();
  const out = await new Response(proc.stdout).text();
  expect(await proc.exited).toBe(0);
  const lines = out.split("\n").filter(Boolean);
  const messages = lines.map((l) => JSON.parse(l) as Record<string, any>);
  for (const m of messages) expect(m.jsonrpc).toBe("2.0");
  messages.sort((a, b) => a.id - b.id);
  expect(messages.map((m) => m.id)).toEqual([1, 2, 3]);
  expect(messages[0].result.serverInfo.name).toBe("subagents");
  expect(messages[1].result.isError).toBe(true);
  expect(messages[1].result.structuredContent.error.code).toBe("INVALID_INPUT");
  expect(messages[1].result.content[0].text).toMatch(/^Invalid delegate_to_subagents call: tasks/);
  expect(messages[2].result.isError).toBe(true);
}, 60_000);

for (const era of ERAS)
  test(`${era}: a two-task delegation returns both outputs, their usage, and progress while it runs; a client without elicitation gives no child ask_parent`, async () => {
    const c = await connectMcp(world, { era });
    try {
      const marker = `two-${era}-${Date.now()}`;
      const tasks = ["alpha", "beta"].map((n) => ({
        name: `${n}-${marker}`,
        prompt: `${n} ${marker} ${script([{ tool: "bash", args: { command: "sleep 0.5; echo busy" } }, { text: `${n} output ${marker}` }])}`,
      }));
      const progress: string[] = [];
      const r = await c.client.callTool(
        { name: "delegate_to_subagents", arguments: { tasks } },
        { onprogress: (p) => progress.push(String(p.message ?? "")), timeout: 120_000 },
      );
      const text = textOf(r);
      expect(r.isError ?? false, text).toBe(false);
      expect(text).toContain(`alpha output ${marker}`);
      expect(text).toContain(`beta output ${marker}`);
      expect(text).toMatch(/Usage: 2 sub-agents · \d+ input, \d+ output tokens · \$/);
      const s = r.structuredContent as Structured;
      expect(s.tasks.map((t) => [t.name, t.status])).toEqual([
        [`alpha-${marker}`, "completed"],
        [`beta-${marker}`, "completed"],
      ]);
      expect(s.tasks.every((t) => t.usage.input > 0 && t.usage.output > 0)).toBe(true);
      expect(s.usage.input).toBe(s.tasks[0].usage.input + s.tasks[1].usage.input);
      expect(progress.length, `progress: ${progress.join(" | ")}`).toBeGreaterThan(0);
      expect(progress.some((m) => /^Sub-agents: \d running/.test(m))).toBe(true);
      expect(progress.some((m) => m.includes("bash"))).toBe(true);
      // Nobody can answer here: the children are not offered ask_parent.
      const req = world.server.requests.find((q) => JSON.stringify(q.messages ?? []).includes(`alpha ${marker}`))!;
      expect((req.tools ?? []).map((t) => t.function?.name)).not.toContain("ask_parent");
      // Recorded like any run: the output is there for get_subagent_output and the CLI.
      const out = await c.client.callTool({
        name: "get_subagent_output",
        arguments: { sessionId: s.tasks[1].sessionId },
      });
      expect(textOf(out)).toBe(`beta output ${marker}`);
      expect((await cli(world, ["output", s.tasks[0].sessionId])).stdout).toContain(`alpha output ${marker}`);
    } finally {
      await c.close();
    }
  }, 180_000);

test("a cancelled call stops its children with the kill protocol: no process left, recorded cancelled", async () => {
  const c = await connectMcp(world);
  try {
    const marker = `cancel-${Date.now()}`;
    const never = join(world.root, `never-${marker}`);
    const ac = new AbortController();
    const call = c.client
      .callTool(
        {
          name: "delegate_to_subagents",
          arguments: { tasks: [{ name: marker, prompt: `hold ${marker} ${script([holdUntil(never)])}` }] },
        },
        { signal: ac.signal, timeout: 120_000 },
      )
      .catch((err: Error) => err);
    const id = await until(`${marker} running`, async () => {
      const rows = (await cli(world, ["sessions", "--running", "--json"])).json;
      return rows.find((row) => row.name === marker && row.status === "running")?.id as string | undefined;
    });
    await until("its child's bash command", () => childrenOf(c.pid).length > 1);
    ac.abort("the user pressed Stop");
    expect(await call).toBeInstanceOf(Error);
    await until(
      () => `no process of the call left (left: ${childrenOf(c.pid).join(", ")})`,
      () => childrenOf(c.pid).length === 0,
    );
    const session = await until(`${id} recorded as ended`, async () => {
      const s = (await cli(world, ["session", id, "--json"])).json[0];
      return s?.status !== "running" ? s : undefined;
    });
    expect(session.status).toBe("error");
    expect(session.transcript).toContain("Cancelled");
  } finally {
    await c.close();
  }
}, 120_000);

test("a client that goes away mid-call: the server stops its children, records them interrupted, and exits", async () => {
  const c = await connectMcp(world);
  const marker = `gone-${Date.now()}`;
  const never = join(world.root, `never-${marker}`);
  void c.client
    .callTool(
      {
        name: "delegate_to_subagents",
        arguments: { tasks: [{ name: marker, prompt: `hold ${marker} ${script([holdUntil(never)])}` }] },
      },
      { timeout: 120_000 },
    )
    .catch(() => {});
  const id = await until(`${marker} running`, async () => {
    const rows = (await cli(world, ["sessions", "--running", "--json"])).json;
    return rows.find((row) => row.name === marker && row.status === "running")?.id as string | undefined;
  });
  await until("its child's bash command", () => childrenOf(c.pid).length > 1);
  await c.close();
  await until(
    "the server and its children gone",
    () => !existsSync(`/proc/${c.pid}`) && childrenOf(c.pid).length === 0,
  );
  const session = (await cli(world, ["session", id, "--json"])).json[0];
  expect(session.status).toBe("error");
  expect(session.transcript).toContain("Session was interrupted");
}, 120_000);

for (const era of ERAS)
  test(`${era}: a child's ask_parent reaches the client as an elicitation, and the answer reaches the child while its sibling runs on`, async () => {
    const asked: string[] = [];
    const c = await connectMcp(world, {
      era,
      elicit: (message) => {
        asked.push(message);
        return { action: "accept", content: { answer: "b" } };
      },
    });
    try {
      const marker = `ask-${era}-${Date.now()}`;
      const steps = [
        { tool: "ask_parent", args: { question: `Which design for ${marker}?`, options: ["a", "b"] } },
        { text: `went with the answer ${marker}` },
      ];
      const r = await c.client.callTool(
        {
          name: "delegate_to_subagents",
          arguments: {
            tasks: [
              { name: `asker-${marker}`, prompt: `ask ${marker} ${script(steps)}` },
              { name: `quiet-${marker}`, prompt: `quiet ${marker} ${script([{ text: `quiet done ${marker}` }])}` },
            ],
          },
        },
        { timeout: 120_000 },
      );
      expect(r.isError ?? false, textOf(r)).toBe(false);
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain(`asker-${marker}`);
      expect(asked[0]).toContain(`Which design for ${marker}? (a | b)`);
      expect(toolResults()).toContain("Answer: b");
      const s = r.structuredContent as Structured;
      expect(s.tasks.map((t) => t.status)).toEqual(["completed", "completed"]);
      expect(textOf(r)).toContain(`went with the answer ${marker}`);
    } finally {
      await c.close();
    }
  }, 180_000);

test("2025 connection: cancelling the call while its child's question is out to the client stops the child; nothing is left", async () => {
  let asked = (_: string) => {};
  const question = new Promise<string>((r) => (asked = r));
  const c = await connectMcp(world, {
    elicit: (message) => {
      asked(message);
      // The person never answers: the form stays open until the call is cancelled.
      return new Promise<never>(() => {}) as never;
    },
  });
  try {
    const marker = `ask-cancel-${Date.now()}`;
    const steps = [{ tool: "ask_parent", args: { question: `Go on with ${marker}?` } }, { text: "never" }];
    const ac = new AbortController();
    const call = c.client
      .callTool(
        { name: "delegate_to_subagents", arguments: { tasks: [{ name: marker, prompt: `ask ${script(steps)}` }] } },
        { signal: ac.signal, timeout: 120_000 },
      )
      .catch((err: Error) => err);
    expect(await question).toContain(`Go on with ${marker}?`);
    ac.abort("the user pressed Stop");
    expect(await call).toBeInstanceOf(Error);
    await until(
      () => `no process of the call left (left: ${childrenOf(c.pid).join(", ")})`,
      () => childrenOf(c.pid).length === 0,
    );
    const row = await until(`${marker} recorded as ended`, async () =>
      (await cli(world, ["sessions", "--json"])).json.find((r) => r.name === marker && r.status !== "running"),
    );
    expect(row.status).toBe("error");
  } finally {
    await c.close();
  }
}, 120_000);

test("the client's roots: tasks run in the first root when the server's folder is outside them, a task cwd outside every root is refused, and nothing starts", async () => {
  const root = join(world.root, "project");
  mkdirSync(root, { recursive: true });
  const c = await connectMcp(world, { roots: [root], cwd: world.root });
  try {
    const marker = `roots-${Date.now()}`;
    const refused = await c.client.callTool({
      name: "delegate_to_subagents",
      arguments: { tasks: [{ name: marker, prompt: "x", cwd: world.workDir }] },
    });
    expect(refused.isError).toBe(true);
    const s = refused.structuredContent as Structured;
    expect(s.tasks).toEqual([]);
    expect(s.error?.code).toBe("INVALID_INPUT");
    expect(textOf(refused)).toBe(
      `task "${marker}": cwd ${world.workDir} is outside the MCP client's roots (${root}); use a folder inside one of them.`,
    );
    expect((await cli(world, ["sessions", "--json"])).json.some((row) => row.name === marker)).toBe(false);
    const ok = await c.client.callTool(
      {
        name: "delegate_to_subagents",
        arguments: {
          tasks: [
            { name: marker, prompt: `where ${script([{ tool: "bash", args: { command: "pwd" } }, { text: "ok" }])}` },
          ],
        },
      },
      { timeout: 120_000 },
    );
    expect(ok.isError ?? false, textOf(ok)).toBe(false);
    expect(toolResults()).toContain(`${root}\n`);
  } finally {
    await c.close();
  }
}, 120_000);

test("a terminal reaches the server's runs: a background subagent is listed with an mcp owner, `subagents steer` answers its question, get_subagent_output waits for its end", async () => {
  const c = await connectMcp(world);
  try {
    const marker = `terminal-${Date.now()}`;
    const steps = [
      { tool: "ask_parent", args: { question: `Which version for ${marker}?` } },
      { finalize: { status: "SUCCESS", result: `released ${marker}` } },
    ];
    const started = await c.client.callTool({
      name: "subagent",
      arguments: { agent: "worker", task: `work ${marker} ${script(steps)}`, background: true },
    });
    expect(textOf(started)).toMatch(/^\*\*Status:\*\* RUNNING\n\*\*Session ID:\*\* `[0-9a-f]{16}`/);
    const id = (started.structuredContent as Structured).tasks[0].sessionId as string;
    const row = await until(`${id} listed running`, async () =>
      (await cli(world, ["sessions", "--running", "--json"])).json.find((r) => r.id === id && r.status === "running"),
    );
    expect(row).toMatchObject({ role: "mcp", ownerPid: c.pid, agent: "worker" });
    // A background child's question waits for an answer from elsewhere: a steer from a terminal is its answer.
    await until(
      `a steer to ${id} answering its question`,
      async () => (await cli(world, ["steer", id, "v2.1"])).code === 0,
    );
    const out = await c.client.callTool(
      { name: "get_subagent_output", arguments: { sessionId: id, wait: true } },
      { timeout: 120_000 },
    );
    expect(textOf(out)).toBe(`released ${marker}`);
    expect(toolResults()).toContain("Answer: v2.1");
  } finally {
    await c.close();
  }
}, 120_000);

test("an MCP call's tasks are recorded when it accepts them: a background task waiting for its sibling is listed queued under the server before anything of it runs, then runs", async () => {
  const c = await connectMcp(world);
  try {
    const marker = `queued-${Date.now()}`;
    const go = join(world.root, `go-${marker}`);
    const started = await c.client.callTool({
      name: "delegate_to_subagents",
      arguments: {
        background: true,
        tasks: [
          { name: `first-${marker}`, prompt: `first ${script([holdUntil(go), { text: `first done ${marker}` }])}` },
          {
            name: `second-${marker}`,
            prompt: `second ${script([{ text: `second done ${marker}` }])}`,
            after: [`first-${marker}`],
          },
        ],
      },
    });
    expect(started.isError ?? false, textOf(started)).toBe(false);
    const [, second] = (started.structuredContent as Structured).tasks.map((t) => t.sessionId as string);
    // No wait: the row exists once the tool has answered, before the task it names can start.
    const rows = (await cli(world, ["sessions", "--running", "--json"])).json;
    expect(
      rows.find((r) => r.id === second),
      JSON.stringify(rows),
    ).toMatchObject({
      status: "queued",
      role: "mcp",
      ownerPid: c.pid,
    });
    mkdirSync(go);
    const out = await c.client.callTool(
      { name: "get_subagent_output", arguments: { sessionId: second, wait: true } },
      { timeout: 120_000 },
    );
    expect(textOf(out)).toBe(`second done ${marker}`);
  } finally {
    await c.close();
  }
}, 120_000);

test("a project-local agent needs consent, and an MCP client cannot give it: subagent fails as a call, delegate fails that task alone", async () => {
  const project = join(world.root, "consent-project");
  mkdirSync(join(project, ".pi", "agents"), { recursive: true });
  const agentFile = join(project, ".pi", "agents", "repo-helper.md");
  writeFileSync(agentFile, "---\ndescription: from the repository\n---\nYou help.\n");
  const c = await connectMcp(world, { cwd: project });
  try {
    const why = `Project-local profile "repo-helper" (${agentFile}) needs consent; there is no UI to ask. Set subagents.projectAgents to "allow" to run it.`;
    const one = await c.client.callTool({ name: "subagent", arguments: { agent: "repo-helper", task: "x" } });
    expect(one.isError).toBe(true);
    expect((one.structuredContent as Structured).error).toEqual({ code: "SUBAGENTS_DISABLED", message: why });
    const marker = `consent-${Date.now()}`;
    const both = await c.client.callTool(
      {
        name: "delegate_to_subagents",
        arguments: {
          tasks: [
            { name: "helper", prompt: "x", profile: "repo-helper" },
            { name: "plain", prompt: `say ${script([{ text: marker }])}` },
          ],
        },
      },
      { timeout: 120_000 },
    );
    const tasks = (both.structuredContent as Structured).tasks;
    expect(tasks.map((t) => [t.name, t.status, t.errorCode ?? null, t.error ?? null])).toEqual([
      // A task's error names files under the home folder with "~" (as every task result does).
      ["helper", "error", "SUBAGENTS_DISABLED", why.replace(world.root, "~")],
      ["plain", "completed", null, null],
    ]);
    expect(tasks[1].output).toBe(marker);
  } finally {
    await c.close();
  }
}, 120_000);
