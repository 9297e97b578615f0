// Budgets, rate limits and model fallback with the real pi as child against the scripted model server:
// a child past its maxTurns / maxTokens / maxCost is told once to wrap up and stopped when it goes on
// (BUDGET_EXCEEDED); one that wraps up completes; a call's maxCost keeps later tasks from starting; 8 tasks
// against a provider answering 429 for 3 s all complete with fewer requests than pi's own retries would make;
// a fallback model answers when the first model returns a non-retryable error, and the record names it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { Store } from "../../../src/core/store/store.ts";
import { bunDbOpener } from "../../../src/host/sqlite-bun.ts";
import {
  cli,
  piCmd,
  piWorld,
  setModels,
  REPO,
  requestsOfTask,
  summaryOf,
  type PiWorld,
  taskWhy,
} from "../../support/pi-env.ts";

let world: PiWorld;

beforeAll(async () => {
  world = await piWorld();
  // Prices so that cost budgets can be reached, and two more models for fallback.
  setModels(world, [
    { id: "fake-model", cost: { input: 1000, output: 1000 } },
    { id: "broken-model" },
    { id: "spare-model" },
  ]);
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "fragile.md"),
    "---\nname: fragile\ndescription: Runs on a model that fails\nmodel: fake/broken-model\nfallbackModels: [fake/spare-model]\n---\nYou are fragile.\n",
  );
});
afterAll(() => world.close());

/**
 * A child that keeps calling tools (each call different, so loop detection stays out of it). Each call takes half
 * a second, as real tool calls take time: a stop decided at a turn's end then lands before the next model request
 * even on a loaded machine (with instant tools the child could send that request first, and the counts raced).
 */
const busy = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ tool: "bash", args: { command: `sleep 0.5; echo step ${i}` } }));
const requestsWith = (marker: string) =>
  world.server.requests.filter((q) => JSON.stringify(q.messages).includes(marker));
const WRAP_UP = "Stop working now";

test("maxTurns 3: the child is told once to wrap up, keeps calling tools, and is stopped with BUDGET_EXCEEDED", async () => {
  const r = await cli(world, ["delegate", "--json", "--max-turns", "3", `turn budget ${script(busy(10))}`]);
  const [t] = summaryOf(r.json);
  expect(r.code).toBe(1);
  expect(t.errorCode).toBe("BUDGET_EXCEEDED");
  expect(t.error).toBe("Budget exceeded: maxTurns (turns 4/3)");
  // Three turns, one more after the wrap-up message, and no more.
  const reqs = requestsWith("turn budget");
  expect(reqs.length).toBe(4);
  expect(JSON.stringify(reqs[3].messages)).toContain(WRAP_UP);
  expect(JSON.stringify(reqs[2].messages)).not.toContain(WRAP_UP);
}, 60_000);

test("with transport json (no channel to the child) reaching a budget stops the child at once", async () => {
  world.setSubagentSettings({ transport: "json" });
  try {
    const r = await cli(world, ["delegate", "--json", "--max-turns", "2", `json budget ${script(busy(10))}`]);
    const [t] = summaryOf(r.json);
    expect(t.errorCode).toBe("BUDGET_EXCEEDED");
    expect(t.error).toBe("Budget exceeded: maxTurns (turns 2/2)");
    expect(requestsWith("json budget").length).toBe(2);
  } finally {
    world.setSubagentSettings({});
  }
}, 60_000);

test("a child that wraps up when told completes, and says the budget was reached", async () => {
  const steps = [...busy(2), { finalize: { status: "SUCCESS", result: "partial but honest" } }];
  const r = await cli(world, ["delegate", "--json", "--max-turns", "2", `wraps up ${script(steps)}`]);
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t)).toBe("completed");
  expect(t.output).toBe("partial but honest");
  expect(t.warnings.join("\n")).toContain("budget reached: maxTurns (turns 3/2): wrapped up when told");
  expect(JSON.stringify(requestsWith("wraps up")[2].messages)).toContain(WRAP_UP);
}, 60_000);

test("maxTokens and maxCost (task field and flag) stop a busy child with the spend named", async () => {
  const tasks = {
    tasks: [
      { name: "tokens", prompt: `token budget ${script(busy(10))}`, maxTokens: 2000 },
      { name: "dollars", prompt: `cost budget ${script(busy(10))}`, maxCost: 3 },
    ],
  };
  const r = await cli(world, ["delegate", "--json", "--tasks", "-"], { stdin: JSON.stringify(tasks) });
  const [tokens, dollars] = summaryOf(r.json);
  expect(tokens.errorCode).toBe("BUDGET_EXCEEDED");
  expect(tokens.error).toMatch(/^Budget exceeded: maxTokens \(tokens \d+\/2000\)$/);
  expect(dollars.errorCode).toBe("BUDGET_EXCEEDED");
  expect(dollars.error).toMatch(/^Budget exceeded: maxCost \(\$[\d.]+\/\$3\.00\)$/);
  expect(dollars.usage.cost).toBeGreaterThanOrEqual(3);
  expect(requestsWith("token budget").length).toBeLessThan(10);
  expect(requestsWith("cost budget").length).toBeLessThan(10);
}, 90_000);

test("a call's maxCost: once spent, a task still queued does not start", async () => {
  const r = await cli(world, [
    "delegate",
    "--json",
    "--concurrency",
    "1",
    "--max-total-cost",
    "2",
    `first spender ${script(busy(10))}`,
    "second never runs",
  ]);
  const [first, second] = summaryOf(r.json);
  expect(first.errorCode).toBe("BUDGET_EXCEEDED");
  expect(first.error).toContain("the call's maxCost");
  expect(second.errorCode).toBe("BUDGET_EXCEEDED");
  expect(second.error).toContain("not started");
  expect(requestsOfTask(world, "second never runs").length).toBe(0);
}, 60_000);

test("--background carries the call's maxCost to the supervisor", async () => {
  const started = await cli(world, [
    "delegate",
    "--background",
    "--json",
    "--concurrency",
    "1",
    "--max-total-cost",
    "2",
    `bg spender ${script(busy(10))}`,
    "bg second never runs",
  ]);
  const ids = started.json.filter((e) => e.type === "task_background").map((e) => e.sessionId as string);
  expect(ids).toHaveLength(2);
  const w = await cli(world, ["wait", ...ids, "--json"]);
  const [first, second] = summaryOf(w.json);
  expect(first.errorCode).toBe("BUDGET_EXCEEDED");
  expect(second.errorCode).toBe("BUDGET_EXCEEDED");
  expect(requestsOfTask(world, "bg second never runs").length).toBe(0);
}, 90_000);

test("8 tasks against a provider answering 429 (Retry-After: 3) for 3 s all complete, with fewer requests than 8 × pi's retries", async () => {
  const before = world.server.requests.length;
  world.server.faults.rateLimit = { forMs: 3000, retryAfterSec: 3 };
  try {
    const tasks = Array.from({ length: 8 }, (_, i) => `limited task ${i}`);
    const r = await cli(world, ["delegate", "--json", ...tasks]);
    const summary = summaryOf(r.json);
    expect(summary.map((t) => t.status)).toEqual(Array(8).fill("completed"));
    const reqs = world.server.requests.slice(before);
    const limited = reqs.filter((q) => q.status === 429).length;
    // pi retries a 429 up to 3 times (2, 4, 8 s): without the call-wide hold every task would spend ~3 requests.
    console.log(`rate-limit test: ${reqs.length} requests (${limited} answered 429) for 8 tasks`);
    expect(reqs.length).toBeLessThan(8 * 3);
    // pi alone retries after 2 s, inside the 3 s window: each early child would meet the limit twice. Held until
    // Retry-After has passed, each child of the first wave meets it once, and later children not at all.
    expect(limited).toBeLessThanOrEqual(4);
    expect(r.json.some((e) => e.type === "rate_limit" && e.retryAfterMs === 3000)).toBe(true);
  } finally {
    delete world.server.faults.rateLimit;
  }
}, 120_000);

test("a limit that outlasts the call's rateLimitWait fails fast with RATE_LIMITED (run has the same handling)", async () => {
  world.setSubagentSettings({ rateLimitWait: 5 });
  world.server.faults.rateLimit = { forMs: 60_000, retryAfterSec: 30 };
  const before = world.server.requests.length;
  const started = Date.now();
  try {
    const r = await cli(world, ["run", "default", "--json", "long limit"]);
    const [t] = summaryOf(r.json);
    expect(r.code).toBe(1);
    expect(t.errorCode).toBe("RATE_LIMITED");
    expect(t.error).toBe("Rate limited (429, retry after 30s): waiting longer would pass this call's 5s limit");
    // Given up at the first answer that asks for more than the call may wait: no retries spent inside the limit.
    expect(world.server.requests.length - before).toBe(1);
    expect(Date.now() - started).toBeLessThan(25_000);
  } finally {
    delete world.server.faults.rateLimit;
    world.setSubagentSettings({});
  }
}, 60_000);

test("fallbackModels: a non-retryable error on the profile's model continues on the next, and the record names it", async () => {
  world.server.faults.modelErrors = { "broken-model": { status: 400, message: "model is retired" } };
  try {
    const r = await cli(world, ["delegate", "--json", "--profile", "fragile", "fallback task"]);
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t)).toBe("completed");
    expect(t.model).toBe("fake/spare-model");
    expect(t.warnings.join("\n")).toMatch(
      /model fake\/broken-model failed \(.*model is retired.*\): continued on fake\/spare-model/,
    );
    const models = requestsWith("fallback task").map((q) => q.model);
    expect(models).toEqual(["broken-model", "spare-model"]);
    const store = new Store(bunDbOpener(Database)(world.env.SUBAGENTS_DB), { isAlive: () => false });
    const run = store.getSession(t.sessionId)!.runs.at(-1)!;
    expect(run.model).toBe("fake/spare-model");
    expect(run.status, taskWhy(run)).toBe("completed");
  } finally {
    delete world.server.faults.modelErrors;
  }
}, 60_000);

test("in pi, delegate_to_subagents takes a task's maxTurns: the result line and the window name the budget and the spend", async () => {
  const parentSession = join(world.root, "parent-budget.jsonl");
  const call = {
    tool: "delegate_to_subagents",
    args: { tasks: [{ name: "busy", prompt: `pi budget ${script(busy(10))}`, maxTurns: 2 }] },
  };
  const proc = Bun.spawn({
    cmd: [...piCmd("current", "node"), "-p", "--session", parentSession, "-e", join(REPO, "dist", "extension.js")],
    cwd: world.workDir,
    env: world.env,
    stdin: new TextEncoder().encode(`parent ${script([call, { text: "parent done" }])}`),
    stdout: "ignore",
    stderr: "pipe",
  });
  expect(await proc.exited).toBe(0);
  const entry = readFileSync(parentSession, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((e) => e.message?.role === "toolResult" && e.message.toolName === "delegate_to_subagents");
  const text = entry.message.content.map((c: { text?: string }) => c.text ?? "").join("");
  expect(text).toMatch(/^✗ busy: error — Budget exceeded: maxTurns \(turns 3\/2\) \(session: [0-9a-f]{16}\)/);
  expect(entry.message.details.windows[0]).toMatchObject({
    budget: "turns 3/2",
    error: "Budget exceeded: maxTurns (turns 3/2)",
  });
}, 90_000);

test("settings fallbackModels: a model that fails after doing work hands its session to the next model, which keeps that work", async () => {
  world.setSubagentSettings({ fallbackModels: ["fake/spare-model"] });
  try {
    const steps = [
      { tool: "bash", args: { command: "echo first-step-output" } },
      {
        status: 400,
        message: "model refused the request",
        times: 1,
        then: { finalize: { status: "SUCCESS", result: "kept going" } },
      },
    ];
    const r = await cli(world, ["delegate", "--json", `work then fail ${script(steps)}`]);
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t)).toBe("completed");
    expect(t.output).toBe("kept going");
    expect(t.model).toBe("fake/spare-model");
    const reqs = requestsWith("work then fail");
    expect(reqs.map((q) => q.model)).toEqual(["fake-model", "fake-model", "spare-model"]);
    // The spare model got the same conversation (the tool result included) and was told to go on.
    const last = JSON.stringify(reqs[2].messages);
    expect(last).toContain("first-step-output");
    expect(last).toContain("The previous model failed; continue the task where it left off.");
  } finally {
    world.setSubagentSettings({});
  }
}, 60_000);
