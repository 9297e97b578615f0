// A sandboxed child's credentials copy (src/core/run/runners/child-auth.ts) on real files: what goes into it (its
// provider's entry; a `!command` run here and written as a literal pi will not run), what comes back into the
// user's auth.json (a refreshed sign-in token of that provider, nothing else), what goes the other way (a token the
// user's file got meanwhile), and children starting with a token about to expire waiting for one refresh.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBunHost } from "../../../../src/host/bun.ts";
import {
  broughtBack,
  childAuth,
  isRefreshedToken,
  literalKey,
  pickCredentials,
} from "../../../../src/core/run/runners/child-auth.ts";
import { until } from "../../../support/pi-env.ts";

const host = createBunHost(() => {
  throw new Error("no db");
});
const root = mkdtempSync(join(tmpdir(), "child-auth-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const hour = 3_600_000;
function agentDir(auth: Record<string, unknown>): string {
  const dir = mkdtempSync(join(root, "agent-"));
  writeFileSync(join(dir, "auth.json"), JSON.stringify(auth, null, 2), { mode: 0o600 });
  return dir;
}
const read = (p: string) => JSON.parse(readFileSync(p, "utf8"));
const token = (n: string, expires = Date.now() + hour) => ({
  type: "oauth",
  access: `a-${n}`,
  refresh: `r-${n}`,
  expires,
});

test("the pure rules: a literal pi will not run, a well-formed token, what comes back", () => {
  expect(literalKey("sk-abc")).toBe("sk-abc");
  expect(literalKey("!rm -rf ~")).toBe("$!rm -rf ~");
  expect(literalKey("a$HOME$")).toBe("a$$HOME$$");
  expect(literalKey("!x$y")).toBe("$!x$$y");
  expect(isRefreshedToken(token("1"))).toBe(true);
  for (const bad of [
    { ...token("1"), type: "api_key" },
    { ...token("1"), access: "!touch x" },
    { ...token("1"), refresh: "two words" },
    { ...token("1"), refresh: "line\nbreak" },
    { ...token("1"), expires: "soon" },
    { ...token("1"), expires: Number.POSITIVE_INFINITY },
    { ...token("1"), access: "" },
    { type: "oauth" },
    "oauth",
  ])
    expect(isRefreshedToken(bad), JSON.stringify(bad)).toBe(false);
  const user = { ...token("old", 1000), accountId: "acct-1" };
  expect(broughtBack(user, token("new", 2000))).toEqual({ ...token("new", 2000), accountId: "acct-1" });
  // Never over an API key, never an older token, never one that is not a token.
  expect(broughtBack({ type: "api_key", key: "sk" }, token("new"))).toBeNull();
  expect(broughtBack(user, token("new", 500))).toBeNull();
  expect(broughtBack(user, { type: "api_key", key: "!touch /tmp/x" })).toBeNull();
  expect(broughtBack(undefined, token("new"))).toBeNull();
  // The child's extra fields (another account) are not taken.
  expect(broughtBack(user, { ...token("new", 2000), accountId: "attacker" })?.accountId).toBe("acct-1");
  const all = { a: token("a"), b: { type: "api_key", key: "k" }, c: { type: "weird" }, d: "x" } as never;
  expect(Object.keys(pickCredentials(all, "a"))).toEqual(["a"]);
  expect(Object.keys(pickCredentials(all, "zzz"))).toEqual([]);
  expect(Object.keys(pickCredentials(all, undefined))).toEqual(["a", "b"]);
});

test("the copy holds the child's provider only, its !command run here once and written as a literal; no auth.json, no copy", async () => {
  const dir = agentDir({
    openai: { type: "api_key", key: "!printf '!sk$1'" },
    other: { type: "api_key", key: "sk-other" },
    anthropic: token("x"),
  });
  const a = (await childAuth(host, dir, "openai", "t1"))!;
  expect(a.file).toStartWith(host.privateTempDir());
  expect(read(a.file)).toEqual({ openai: { type: "api_key", key: "$!sk$$1" } });
  const all = (await childAuth(host, dir, undefined, "t2"))!;
  expect(Object.keys(read(all.file)).sort()).toEqual(["anthropic", "openai", "other"]);
  expect(readFileSync(all.file, "utf8")).not.toContain("!printf");
  await a.close();
  await all.close();
  expect(existsSync(a.file)).toBe(false);
  // A command that fails leaves the entry out (pi then says the key is missing).
  const failing = agentDir({ openai: { type: "api_key", key: "!exit 3" } });
  const f = (await childAuth(host, failing, "openai", "t3"))!;
  expect(read(f.file)).toEqual({});
  await f.close();
  expect(await childAuth(host, mkdtempSync(join(root, "none-")), "openai", "t4")).toBeNull();
});

test("a refreshed sign-in token comes back into the user's file while the child runs; a planted key never does, and is named", async () => {
  const dir = agentDir({ anthropic: { ...token("old"), accountId: "acct" }, other: { type: "api_key", key: "sk-o" } });
  const real = join(dir, "auth.json");
  const a = (await childAuth(host, dir, "anthropic", "t5"))!;
  // What pi writes when it refreshes: the whole file, in place.
  const fresh = token("fresh", Date.now() + 2 * hour);
  writeFileSync(a.file, JSON.stringify({ anthropic: fresh }, null, 2));
  await until("the refreshed token in the user's auth.json", () => read(real).anthropic.access === "a-fresh", 10_000);
  expect(read(real)).toEqual({ anthropic: { ...fresh, accountId: "acct" }, other: { type: "api_key", key: "sk-o" } });
  expect(existsSync(`${real}.lock`)).toBe(false);
  // The child plants a command in its copy, and a key for another provider: neither comes back.
  writeFileSync(
    a.file,
    JSON.stringify({ anthropic: { type: "api_key", key: "!touch /tmp/x" }, openai: { type: "api_key", key: "!y" } }),
  );
  expect(a.warnings()[0]).toMatch(/changed anthropic, openai in its copy of auth\.json: not kept/);
  await a.close();
  expect(read(real).anthropic).toEqual({ ...fresh, accountId: "acct" });
  expect(readFileSync(real, "utf8")).not.toContain("!");
});

test("a token the user's file gets meanwhile goes into the running child's copy", async () => {
  const dir = agentDir({ anthropic: token("one") });
  const a = (await childAuth(host, dir, "anthropic", "t6"))!;
  writeFileSync(join(dir, "auth.json"), JSON.stringify({ anthropic: token("two", Date.now() + 3 * hour) }));
  await until("the user's newer token in the copy", () => read(a.file).anthropic.access === "a-two", 10_000);
  await a.close();
});

test("children starting with a token about to expire: the later ones wait for the first one's refresh and start with it", async () => {
  const dir = agentDir({ anthropic: token("stale", Date.now() + 60_000) });
  const first = (await childAuth(host, dir, "anthropic", "t7"))!;
  let second: Awaited<ReturnType<typeof childAuth>> | undefined;
  const waiting = childAuth(host, dir, "anthropic", "t8").then((s) => (second = s));
  await Bun.sleep(300);
  expect(second).toBeUndefined();
  writeFileSync(first.file, JSON.stringify({ anthropic: token("refreshed", Date.now() + 2 * hour) }));
  await waiting;
  expect(read(second!.file).anthropic.access).toBe("a-refreshed");
  await first.close();
  await second!.close();
});
