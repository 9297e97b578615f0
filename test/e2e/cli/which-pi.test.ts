// Which pi children run, and that every place says so: `childPi: auto` takes the newer of the embedded pi and the
// user's installed pi; `--version --verbose`, `session --json` (its `pi` field) and the session view name it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, NODE24, PI_PACKAGE_DIRS, piWorld, REPO, summaryOf, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const embeddedVersion = () => readFileSync(join(REPO, "dist", "embedded-pi.txt"), "utf8").trim();

async function delegateAndDescribe(env: Record<string, string> = {}, cwd?: string) {
  const r = await cli(world, ["delegate", `which pi ${script([{ text: "ok" }])}`, "--json"], {
    binary: true,
    env,
    cwd,
  });
  expect(r.code, r.stderr).toBe(0);
  const id = summaryOf(r.json)[0].sessionId as string;
  const session = await cli(world, ["session", id, "--json"], { binary: true, env, cwd });
  const text = await cli(world, ["session", id], { binary: true, env, cwd });
  return { pi: session.json[0].pi as string, view: text.stdout };
}

test("children run the embedded pi when the user's is not newer, and every place names it", async () => {
  const expected = `pi ${embeddedVersion()} · bun ${Bun.version} · embedded (${join(REPO, "dist", "subagents")})`;
  const verbose = await cli(world, ["--version", "--verbose"], { binary: true });
  expect(verbose.stdout).toContain(`children: ${expected}`);
  const { pi, view } = await delegateAndDescribe();
  expect(pi).toBe(expected);
  expect(view).toMatch(new RegExp(`Pi +${expected.replace(/[().]/g, "\\$&")}`));
});

test("a user's pi newer than the embedded one runs the children (CLI), named with its version and runtime", async () => {
  // The user's pi: the real pi bundle under a package that says it is a later release.
  const project = join(world.root, "project");
  const pkg = join(project, "node_modules", "@earendil-works", "pi-coding-agent");
  mkdirSync(pkg, { recursive: true });
  const real = JSON.parse(readFileSync(join(PI_PACKAGE_DIRS.current, "package.json"), "utf8"));
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ ...real, version: "99.0.0" }));
  symlinkSync(join(PI_PACKAGE_DIRS.current, "dist"), join(pkg, "dist"));
  const env = { PATH: `${dirname(NODE24)}:/usr/bin:/bin` };
  const verbose = await cli(world, ["--version", "--verbose"], { binary: true, env, cwd: project });
  expect(verbose.stdout).toContain(`children: pi 99.0.0 · node`);
  const { pi } = await delegateAndDescribe(env, project);
  expect(pi).toStartWith("pi 99.0.0 · node 24.");
  expect(pi).toEndWith(`· ${pkg}`);

  // That run started compiling the user's pi once, in the background, with our child extension built in;
  // once ready, children run it (no Node, no jiti) and say so.
  const cache = join(world.root, ".cache", "subagents", "compiled-pi");
  const deadline = Date.now() + 60_000;
  const ready = () =>
    existsSync(cache)
      ? readdirSync(cache).find((d) => existsSync(join(cache, d, "ready")) || existsSync(join(cache, d, "failed")))
      : undefined;
  while (!ready() && Date.now() < deadline) await Bun.sleep(200);
  const dir = join(cache, ready()!);
  expect(existsSync(join(dir, "failed")) ? readFileSync(join(dir, "failed"), "utf8") : "").toBe("");
  const compiled = await delegateAndDescribe(env, project);
  expect(compiled.pi).toBe(`pi 99.0.0 · bun ${Bun.version} · compiled from ${pkg} (${join(dir, "pi")})`);
  // It runs codemode like the user's own pi: the sandbox worker is compiled in, QuickJS's wasm linked beside it.
  const before = world.server.requests.length;
  const steps = [{ tool: "codemode", args: { code: "return 40 + 2" } }, { text: "done" }];
  const child = Bun.spawn({
    cmd: [join(dir, "pi"), "-p", "--no-session", "--tools", "read,codemode", `codemode ${script(steps as never)}`],
    cwd: project,
    env: { ...world.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = await new Response(child.stderr).text();
  expect(await child.exited, stderr).toBe(0);
  const result = JSON.stringify(world.server.requests.slice(before).at(-1)?.messages?.at(-1));
  expect(result).toContain("Script completed");
  expect(result).toContain("42");
  // Turned off: the user's pi as it is.
  expect((await delegateAndDescribe({ ...env, SUBAGENTS_COMPILE_PI: "0" }, project)).pi).toStartWith(
    "pi 99.0.0 · node 24.",
  );
}, 120_000);
