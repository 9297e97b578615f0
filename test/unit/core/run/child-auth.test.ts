// A sandboxed child's own auth.json (src/core/run/runners/child-auth.ts, child-files.ts) on real files: what goes
// into it (exactly its provider's entry; a `!command` run here and written as a literal pi will not run; a sign-in
// token without its refresh token; nothing when the provider is not known), a token about to expire refreshed first by
// the user's own pi (a stand-in script here: no provider to sign in to), once for children starting together, and
// nothing of the child's ever read back.
import { afterAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBunHost } from "../../../../src/host/bun.ts";
import {
  childAuth,
  isSignInToken,
  literalKey,
  pickCredentials,
  REFRESH_AHEAD_MS,
  type TokenRefresher,
} from "../../../../src/core/run/runners/child-auth.ts";
import { childFiles } from "../../../../src/core/run/runners/child-files.ts";
import type { PlaceRequest } from "../../../../src/core/run/runners/types.ts";

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

test("the pure rules: a literal pi will not run; exactly the child's provider, a sign-in token without its refresh token", () => {
  expect(literalKey("sk-abc")).toBe("sk-abc");
  expect(literalKey("!rm -rf ~")).toBe("$!rm -rf ~");
  expect(literalKey("a$HOME$")).toBe("a$$HOME$$");
  expect(literalKey("!x$y")).toBe("$!x$$y");
  expect(isSignInToken(token("1"))).toBe(true);
  for (const bad of [
    { ...token("1"), type: "api_key" },
    { ...token("1"), access: "!touch x" },
    { ...token("1"), access: "two words" },
    { ...token("1"), expires: "soon" },
    { ...token("1"), expires: Number.POSITIVE_INFINITY },
    { ...token("1"), access: "" },
    { type: "oauth" },
    "oauth",
  ])
    expect(isSignInToken(bad), JSON.stringify(bad)).toBe(false);
  const all = { a: token("a"), b: { type: "api_key", key: "k" }, c: { type: "weird" }, d: "x" } as never;
  expect(pickCredentials(all, "a")).toEqual({ a: { ...token("a"), refresh: "" } });
  expect(pickCredentials(all, "b")).toEqual({ b: { type: "api_key", key: "k" } });
  expect(pickCredentials(all, "c")).toEqual({});
  expect(pickCredentials(all, "zzz")).toEqual({});
  // Not known here: nothing (it used to be every entry: a project's `{"defaultModel": null}` got them all).
  expect(pickCredentials(all, undefined)).toEqual({});
});

test("the child's auth.json holds its provider only, its !command run here once and written as a literal; none when the provider is not known; no auth.json, nothing", async () => {
  const signedIn = token("x");
  const dir = agentDir({
    openai: { type: "api_key", key: "!printf '!sk$1'" },
    other: { type: "api_key", key: "sk-other" },
    anthropic: signedIn,
  });
  const a = (await childAuth(host, dir, "openai"))!;
  expect(JSON.parse(a.text)).toEqual({ openai: { type: "api_key", key: "$!sk$$1" } });
  const unknown = (await childAuth(host, dir, undefined))!;
  expect(JSON.parse(unknown.text)).toEqual({});
  expect(unknown.warnings[0]).toContain("the child's model provider is not known here");
  const signIn = (await childAuth(host, dir, "anthropic"))!;
  expect(JSON.parse(signIn.text)).toEqual({ anthropic: { ...signedIn, refresh: "" } });
  expect(signIn.text).not.toContain("r-x");
  // A command that fails leaves the entry out (pi then says the key is missing).
  const failing = agentDir({ openai: { type: "api_key", key: "!exit 3" } });
  expect(JSON.parse((await childAuth(host, failing, "openai"))!.text)).toEqual({});
  expect(await childAuth(host, mkdtempSync(join(root, "none-")), "openai")).toBeNull();
});

/** The user's pi as it refreshes a token (`auth print-bearer-token --min-expiry`): stores a new one in auth.json
 *  under its lock and prints it. Counts its runs. */
function fakePi(dir: string): TokenRefresher & { runs: () => number } {
  const script = join(dir, "pi");
  const count = join(dir, "runs");
  writeFileSync(
    script,
    `#!/bin/sh
echo x >> "${count}"
[ "$1 $2 $3 $4 $5" = "auth print-bearer-token --provider anthropic --min-expiry" ] || exit 9
sleep 0.3
printf '{"anthropic":{"type":"oauth","access":"a-refreshed","refresh":"r-refreshed","expires":%s}}' "$(( $(date +%s) * 1000 + 7200000 ))" > "$PI_CODING_AGENT_DIR/auth.json"
echo a-refreshed
`,
  );
  chmodSync(script, 0o755);
  return {
    piCommand: [script],
    env: { PI_CODING_AGENT_DIR: dir },
    available: true,
    runs: () => (existsSync(count) ? readFileSync(count, "utf8").split("\n").filter(Boolean).length : 0),
  };
}

test("a sign-in token that would expire within the run is refreshed first by the user's own pi, once for children starting together; the child gets the new one without its refresh token", async () => {
  const dir = agentDir({ anthropic: token("stale", Date.now() + REFRESH_AHEAD_MS / 3) });
  const pi = fakePi(dir);
  const [a, b] = await Promise.all([childAuth(host, dir, "anthropic", pi), childAuth(host, dir, "anthropic", pi)]);
  expect(pi.runs()).toBe(1);
  for (const c of [a!, b!]) {
    expect(JSON.parse(c.text).anthropic).toMatchObject({ access: "a-refreshed", refresh: "" });
    expect(c.warnings).toEqual([]);
  }
  // The user's file keeps what pi stored (with its refresh token); nothing of the child's is involved.
  expect(read(join(dir, "auth.json")).anthropic.refresh).toBe("r-refreshed");
  // A fresh token is not refreshed again.
  await childAuth(host, dir, "anthropic", pi);
  expect(pi.runs()).toBe(1);
  // A pi that cannot refresh ahead (before 0.83): the child starts, and the person is told.
  const old = agentDir({ anthropic: token("stale", Date.now() + 60_000) });
  const c = (await childAuth(host, old, "anthropic", { ...fakePi(old), available: false }))!;
  expect(c.warnings[0]).toMatch(/sign-in token of anthropic expires in \d+ min and could not be refreshed/);
});

test("handed over: through a pipe (no file) on this machine, else a 0600 file of the owner's removed when the child ends and never read back", async () => {
  const dir = agentDir({ openai: { type: "api_key", key: "sk-one" }, other: { type: "api_key", key: "sk-two" } });
  const req = (name: string) =>
    ({
      host,
      agentDir: dir,
      sessionFile: join(dir, "subagent-sessions", "s", `${name}.jsonl`),
      name,
      piAuth: { provider: "openai" },
    }) as unknown as PlaceRequest;
  const inline = await childFiles(req("c1"), { inline: true });
  expect(inline.auth).toEqual({ data: `${JSON.stringify({ openai: { type: "api_key", key: "sk-one" } }, null, 2)}\n` });
  await inline.close();
  const filed = await childFiles(req("c2"));
  if (!filed.auth || !("file" in filed.auth)) throw new Error("no file");
  const file = filed.auth.file;
  expect(read(file)).toEqual({ openai: { type: "api_key", key: "sk-one" } });
  // What the child writes into it stays there and goes with it.
  writeFileSync(file, JSON.stringify({ openai: { type: "api_key", key: "!touch /tmp/planted" } }));
  await filed.close();
  expect(existsSync(file)).toBe(false);
  expect(read(join(dir, "auth.json")).openai.key).toBe("sk-one");
});
