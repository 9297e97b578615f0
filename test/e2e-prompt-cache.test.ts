// The scripted server bills like a provider (issue 35): repeated prefixes (tools → system prompt → messages) are
// reported as cached tokens, and the real pi counts them as cacheRead at the model's cache price.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { cacheText, commonPrefix, createPromptCache } from "../src/scripted/prompt-cache.ts";
import { script } from "../src/scripted/model-server.ts";
import { piCmd, piWorld, priceModel, type PiWorld } from "./support/pi-env.ts";

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

type Usage = { input: number; output: number; cacheRead: number; cost: { input: number; cacheRead: number; total: number } };
async function runPi(prompt: string): Promise<{ usage: Usage[]; stderr: string }> {
  const proc = Bun.spawn({ cmd: [...piCmd("current", "node"), "--mode", "json", "-p", "--no-session"], cwd: world.workDir, env: world.env, stdin: new TextEncoder().encode(prompt), stdout: "pipe", stderr: "pipe" });
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
