// The scripted server bills like a provider (issue 35): repeated prefixes (tools → system prompt → messages) are
// reported as cached tokens, and the real pi counts them as cacheRead at the model's cache price.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { cacheText, commonPrefix, createPromptCache } from "../../../src/scripted/prompt-cache.ts";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piCmd, piWorld, priceModel, summaryOf, type PiWorld } from "../../support/pi-env.ts";

const req = (tools: string[], system: string, ...users: string[]) => ({
  tools: tools.map((name) => ({ type: "function", function: { name } })),
  messages: [{ role: "system", content: system }, ...users.map((content) => ({ role: "user", content }))],
});

test("cache text: tools first, then the system prompt, then the messages; object key order does not matter", () => {
  const t = cacheText(req(["read"], "SYS", "hello"));
  expect(t.indexOf("read")).toBeLessThan(t.indexOf("SYS"));
  expect(t.indexOf("SYS")).toBeLessThan(t.indexOf("hello"));
  const a = cacheText({ messages: [{ role: "user", content: "x", name: "n" } as never] });
  const b = cacheText({ messages: [{ name: "n", content: "x", role: "user" } as never] });
  expect(a).toBe(b);
});

test("the longest kept prefix is read; a different tool set shares nothing past the tools; entries expire", () => {
  const cache = createPromptCache({ ttlMs: 1000 });
  const first = cacheText(req(["read", "bash"], "S".repeat(400), "task one"));
  expect(cache.read(first, 0)).toBe(0);
  const sibling = cacheText(req(["read", "bash"], "S".repeat(400), "task two"));
  expect(cache.read(sibling, 10)).toBe(commonPrefix(first, sibling));
  expect(commonPrefix(first, sibling)).toBeGreaterThan(400);
  const otherTools = cacheText(req(["read", "bash", "extra"], "S".repeat(400), "task one"));
  expect(cache.read(otherTools, 20)).toBeLessThan(first.indexOf("SSSS"));
  // A continuation of a kept request reads all of it.
  const next = cacheText(req(["read", "bash"], "S".repeat(400), "task one", "more"));
  expect(cache.read(next, 30)).toBe(first.length);
  expect(cache.read(next, 5000)).toBe(0);
});

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
  // $ per million tokens; cache reads at a tenth, as providers bill them.
  priceModel(world, { input: 1000, output: 2000, cacheRead: 100 });
});
afterAll(() => world.close());

type Usage = {
  input: number;
  output: number;
  cacheRead: number;
  cost: { input: number; cacheRead: number; total: number };
};
async function runPi(prompt: string): Promise<{ usage: Usage[]; stderr: string }> {
  const proc = Bun.spawn({
    cmd: [...piCmd("current", "node"), "--mode", "json", "-p", "--no-session"],
    cwd: world.workDir,
    env: world.env,
    stdin: new TextEncoder().encode(prompt),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  const usage = out
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "message_end" && e.message?.role === "assistant")
    .map((e) => e.message.usage as Usage);
  return { usage, stderr };
}

test("pi counts the server's cached tokens as cacheRead and prices them at the model's cache price", async () => {
  world.server.billing.cache = true;
  world.server.promptCache.clear();
  const from = world.server.requests.length;
  const one = await runPi(`first question ${script([{ text: "one" }])}`);
  const two = await runPi(`second question ${script([{ text: "two" }])}`);
  expect(one.usage.length, one.stderr.slice(-800)).toBe(1);
  expect(two.usage.length, two.stderr.slice(-800)).toBe(1);
  const [a, b] = world.server.requests.slice(from);
  // The first request found nothing kept; the second repeats its tools and system prompt.
  expect(a.usage!.cached).toBe(0);
  expect(one.usage[0].cacheRead).toBe(0);
  expect(b.usage!.cached).toBeGreaterThan(b.usage!.prompt * 0.8);
  expect(two.usage[0].cacheRead).toBe(b.usage!.cached);
  expect(two.usage[0].input).toBe(b.usage!.prompt - b.usage!.cached);
  expect(two.usage[0].cost.cacheRead).toBeCloseTo((b.usage!.cached * 100) / 1e6, 10);
  expect(two.usage[0].cost.total).toBeLessThan(one.usage[0].cost.total / 2);

  // Caching off: the same request is billed in full again.
  world.server.billing.cache = false;
  const three = await runPi(`second question ${script([{ text: "two" }])}`);
  expect(three.usage[0].cacheRead, three.stderr.slice(-800)).toBe(0);
  expect(three.usage[0].input).toBe(world.server.requests.at(-1)!.usage!.prompt);
}, 120_000);

test("a task's maxCost counts cache reads at the cache price: a busy child runs past the turn where uncached prices would have stopped it", async () => {
  world.server.billing.cache = true;
  world.server.promptCache.clear();
  // Tool calls that take a moment, each different (no loop detection), as in e2e-budgets.
  const busy = Array.from({ length: 12 }, (_, i) => ({
    tool: "bash",
    args: { command: `sleep 0.3; echo cached step ${i}` },
  }));
  const marker = "cache-priced-budget-4410";
  const r = await cli(world, ["delegate", "--json", "--max-cost", "2.5", `${marker} ${script(busy)}`]);
  const [task] = summaryOf(r.json);
  expect(task?.errorCode, r.stderr.slice(-800)).toBe("BUDGET_EXCEEDED");
  const mine = world.server.requests.filter((q) => JSON.stringify(q.messages).includes(marker) && q.usage);
  const cached = mine.reduce((n, q) => n + q.usage!.cached, 0);
  // Every request carries ~1.4k prompt tokens: at the input price ($1,000/M) two would pass $2.5; at the cache
  // price the child gets several more turns.
  expect(mine[0].usage!.prompt).toBeGreaterThan(1250);
  expect(mine.length, `requests: ${mine.length}`).toBeGreaterThan(3);
  expect(task.usage.cacheRead).toBeGreaterThan(0);
  expect(task.usage.cacheRead).toBeLessThanOrEqual(cached);
  const billed = mine.reduce(
    (d, q) => d + ((q.usage!.prompt - q.usage!.cached) * 1000 + q.usage!.cached * 100 + q.usage!.output * 2000) / 1e6,
    0,
  );
  expect(task.usage.cost).toBeGreaterThanOrEqual(2.5);
  expect(task.usage.cost).toBeLessThanOrEqual(billed + 1e-9);
  world.server.billing.cache = false;
}, 120_000);
