// The user's newer pi, compiled once in the background by the real executable, heals by itself and says when it
// is not used: a compile started from a folder removed a moment later still completes (and an old build's failed
// marker is retried); a compile killed with SIGKILL is started again by the next run; a bundle without our hook
// points fails once, with its reason, and is not retried; `doctor` and `--version --verbose` name each state.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { compiledPiDir } from "../../../src/host/compiled-pi.ts";
import { readLock } from "../../../src/host/compiled-pi-state.ts";
import { isZombie, pidAlive, procStartTime } from "../../../src/host/process-identity.ts";
import { readPiPackage } from "../../../src/host/pi-discovery.ts";
import { cli, NODE24, PI_PACKAGE_DIRS, piWorld, REPO, summaryOf, type PiWorld } from "../../support/pi-env.ts";

const BINARY = join(REPO, "dist", "subagents");
const caches: string[] = [];
let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  // A compile these tests started (detached, by the CLI) must not outlive them.
  for (const cache of caches)
    for (const dir of existsSync(cache) ? readdirSync(cache) : []) {
      const lock = readLock(join(cache, dir));
      if (lock?.pid && compileProcess(lock.pid)) process.kill(lock.pid, "SIGKILL");
    }
  await world.close();
});

function compileProcess(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("__compile-pi");
  } catch {
    return false;
  }
}

async function until<T>(what: string, check: () => T | undefined | null | false, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

/** A project whose pi says it is a later release than the embedded one: the real pi 1.x bundle, or (noHooks) a
 *  bundle whose runtime file has none of the places our hooks go, while its `cli.js` still runs the real pi. */
function userPi(name: string, opts: { noHooks?: boolean } = {}) {
  const project = join(world.root, name);
  const pkg = join(project, "node_modules", "@earendil-works", "pi-coding-agent");
  mkdirSync(pkg, { recursive: true });
  const real = JSON.parse(readFileSync(join(PI_PACKAGE_DIRS.current, "package.json"), "utf8"));
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ ...real, version: "99.0.0" }));
  if (opts.noHooks) {
    mkdirSync(join(pkg, "dist", "bundle"), { recursive: true });
    symlinkSync(join(PI_PACKAGE_DIRS.current, "dist", "bundle", "cli.js"), join(pkg, "dist", "bundle", "cli.js"));
    writeFileSync(join(pkg, "dist", "bundle", "cli-runtime.js"), "export const notPi = 1;\n");
  } else {
    symlinkSync(join(PI_PACKAGE_DIRS.current, "dist"), join(pkg, "dist"));
  }
  const cache = join(world.root, `${name}-cache`);
  caches.push(cache);
  // No pi on PATH: the project's pi is the user's.
  const env = { PATH: `${dirname(NODE24)}:/usr/bin:/bin`, XDG_CACHE_HOME: cache };
  const dir = compiledPiDir(env, readPiPackage(pkg)!, BINARY)!;
  return { project, pkg, env, dir };
}

async function delegate(env: Record<string, string>, cwd: string) {
  const r = await cli(world, ["delegate", `trivial ${script([{ text: "ok" }])}`, "--json"], { binary: true, env, cwd });
  const id = summaryOf(r.json)[0]?.sessionId as string | undefined;
  if (!id) return { code: r.code, pi: "", stderr: r.stderr };
  const session = await cli(world, ["session", id, "--json"], { binary: true, env, cwd });
  return { code: r.code, pi: session.json[0].pi as string, stderr: r.stderr };
}

const marker = (dir: string, name: string) =>
  existsSync(join(dir, name)) ? readFileSync(join(dir, name), "utf8") : "";
const finished = (dir: string) => existsSync(join(dir, "ready")) || existsSync(join(dir, "failed"));

async function childrenCheck(env: Record<string, string>, cwd: string) {
  const r = await cli(world, ["doctor", "--json"], { binary: true, env, cwd });
  const check = (r.json[0]?.checks ?? []).find((c: { name: string }) => c.name === "children");
  expect(check, r.stdout + r.stderr).toBeDefined();
  return check as { status: string; detail: string; fix?: string };
}

test("a compile started from a folder removed a moment later completes (an old build's failed marker is retried)", async () => {
  const { project, env, dir, pkg } = userPi("gone-cwd");
  // What an older build left: a plain-text failed marker from a compile that lost its folder, never retried then.
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "failed"), "failed to get the current directory\n"); // what older builds wrote
  const hourAgo = new Date(Date.now() - 3_600_000);
  utimesSync(join(dir, "failed"), hourAgo, hourAgo);
  expect((await childrenCheck(env, project)).detail).toContain(
    "compiling it failed 60 min ago (failed to get the current directory); the next run tries again",
  );

  const scratch = join(project, "scratch");
  mkdirSync(scratch);
  const run = cli(world, ["delegate", `trivial ${script([{ text: "ok" }])}`, "--json"], {
    binary: true,
    env,
    cwd: scratch,
  });
  const lock = await until("the compile to start", () => readLock(dir), 60_000);
  rmSync(scratch, { recursive: true, force: true });
  await run;
  const oldMarker = "failed to get the current directory\n";
  await until(
    "the compile to finish",
    () => existsSync(join(dir, "ready")) || (readLock(dir) === null && marker(dir, "failed") !== oldMarker),
  );
  expect(marker(dir, "failed"), `compile.log:\n${marker(dir, "compile.log")}`).toBe("");
  expect(lock.pid).toBeGreaterThan(0);
  const after = await delegate(env, project);
  expect(after.pi, after.stderr).toBe(`pi 99.0.0 · bun ${Bun.version} · compiled from ${pkg} (${join(dir, "pi")})`);
  expect((await childrenCheck(env, project)).status).toBe("ok");
}, 180_000);

test("a compile killed with SIGKILL is started again by the next run; children are on the compiled pi within a minute", async () => {
  const { project, env, dir, pkg } = userPi("killed");
  const first = await delegate(env, project);
  expect(first.pi, first.stderr).toStartWith("pi 99.0.0 · node 24.");
  const victim = await until("the compile process", () => {
    const lock = readLock(dir);
    return lock && compileProcess(lock.pid) && !finished(dir) ? lock.pid : null;
  });
  process.kill(victim, "SIGKILL");
  const killedAt = Date.now();
  // Gone: reaped, or a zombie (the init here may reap late); not merely exiting (its cmdline is empty earlier).
  await until("the killed compile to be gone", () => !pidAlive(victim) || isZombie(victim), 30_000);
  expect(finished(dir)).toBe(false);
  // The lock still names the dead process: doctor says the compile ended, the next run starts it again at once.
  expect(readLock(dir)?.pid).toBe(victim);
  expect((await childrenCheck(env, project)).detail).toContain(
    `its compile (pid ${victim}) ended without a result; the next run compiles it in the background`,
  );
  const second = await delegate(env, project);
  expect(second.code, second.stderr).toBe(0);
  const restarted = readLock(dir);
  expect(
    finished(dir) || (restarted !== null && restarted.pid !== victim),
    "the next run did not restart the compile",
  ).toBe(true);
  await until("the restarted compile to finish", () => finished(dir), 60_000 - (Date.now() - killedAt));
  expect(marker(dir, "failed"), `compile.log:\n${marker(dir, "compile.log")}`).toBe("");
  const third = await delegate(env, project);
  expect(third.pi, third.stderr).toBe(`pi 99.0.0 · bun ${Bun.version} · compiled from ${pkg} (${join(dir, "pi")})`);
  expect(Date.now() - killedAt).toBeLessThan(60_000);
  // Nothing half-written is left of the killed compile.
  expect(readdirSync(dir).filter((f) => f.startsWith(".build-"))).toEqual([]);
}, 180_000);

test("a bundle without our hook points fails once with its reason and is not compiled again", async () => {
  const { project, env, dir } = userPi("no-hooks", { noHooks: true });
  const first = await delegate(env, project);
  expect(first.code, first.stderr).toBe(0);
  expect(first.pi).toStartWith("pi 99.0.0 · node 24.");
  await until("the compile to fail", () => existsSync(join(dir, "failed")) && !readLock(dir), 60_000);
  const failed = JSON.parse(marker(dir, "failed"));
  expect(failed.final).toBe(true);
  expect(failed.attempts).toBe(1);
  expect(failed.reason).toContain("does not have the shape this build hooks");
  expect(failed.build).toStartWith("subagents ");
  expect(existsSync(join(dir, "ready"))).toBe(false);

  const again = await delegate(env, project);
  expect(again.code, again.stderr).toBe(0);
  expect(again.pi).toStartWith("pi 99.0.0 · node 24.");
  expect(readLock(dir), "a run started the compile again").toBeNull();
  expect(JSON.parse(marker(dir, "failed"))).toEqual(failed);

  const check = await childrenCheck(env, project);
  expect(check.status).toBe("warn");
  expect(check.detail).toContain("slow path: children run pi 99.0.0 as installed");
  expect(check.detail).toContain("its bundle does not have what this build's hooks need");
  expect(check.detail).toContain("not compiled again for this pi and build");
  expect(check.fix).toContain('set subagents.childPi to "embedded"');
}, 180_000);

test("doctor and --version --verbose name each state of the compiled pi, with the fix", async () => {
  const { project, env, dir } = userPi("states");
  const state = async (extra: Record<string, string> = {}) => childrenCheck({ ...env, ...extra }, project);

  let c = await state();
  expect(c.status).toBe("warn");
  expect(c.detail).toContain("it is not compiled yet; the next run compiles it in the background");

  c = await state({ SUBAGENTS_COMPILE_PI: "0" });
  expect(c.detail).toContain("SUBAGENTS_COMPILE_PI=0 turns the compiled copy off");
  expect(c.fix).toContain("unset SUBAGENTS_COMPILE_PI");

  mkdirSync(dir, { recursive: true });
  const sleeper = Bun.spawn({ cmd: ["sleep", "60"], stdio: ["ignore", "ignore", "ignore"] });
  try {
    writeFileSync(
      join(dir, "compiling"),
      JSON.stringify({ pid: sleeper.pid, startTime: procStartTime(sleeper.pid), at: Date.now(), tries: 1 }),
    );
    c = await state();
    expect(c.detail).toContain(`it is being compiled (pid ${sleeper.pid}, started`);
  } finally {
    sleeper.kill("SIGKILL");
    await sleeper.exited;
  }
  c = await state();
  expect(c.detail).toContain(`its compile (pid ${sleeper.pid}) ended without a result`);
  rmSync(join(dir, "compiling"));

  const failure = {
    at: Date.now() - 30_000,
    reason: "error: Bundle failed\nerror: ENOSPC: no space left on device",
    build: "subagents 9.9.9 · commit abc",
    final: false,
    attempts: 2,
  };
  writeFileSync(join(dir, "failed"), JSON.stringify(failure));
  c = await state();
  // Failed 30 s ago, twice in a row: the next try waits 2 min from the failure.
  expect(c.detail).toMatch(
    /compiling it failed 3\d s ago by subagents 9\.9\.9 · commit abc \(error: ENOSPC: no space left on device; 2 times in a row\); a run after [89]\d s from now tries again/,
  );
  expect(c.fix).toBe(`see ${join(dir, "failed")}; to retry at the next run, remove it`);
  const verbose = await cli(world, ["--version", "--verbose"], { binary: true, env, cwd: project });
  expect(verbose.stdout).toContain("children: pi 99.0.0 · node 24.");
  expect(verbose.stdout).toContain(
    "\n  slow path: children run pi 99.0.0 as installed, not compiled once by subagents",
  );
  expect(verbose.stdout).toContain(`\n  fix: see ${join(dir, "failed")}`);

  writeFileSync(
    join(dir, "failed"),
    JSON.stringify({
      ...failure,
      final: true,
      reason:
        'pi (/x) does not have the shape this build hooks:\n  found 0 "async function main(args, options)" reading options.extensionFactories (want 1)',
    }),
  );
  c = await state();
  expect(c.detail).toContain(
    'its bundle does not have what this build\'s hooks need (found 0 "async function main(args, options)"',
  );

  rmSync(join(dir, "failed"));
  writeFileSync(join(dir, "ready"), "now\n");
  c = await state();
  expect(c.status).toBe("ok");
  expect(c.detail).toContain(`compiled from`);
  const okVerbose = await cli(world, ["--version", "--verbose"], { binary: true, env, cwd: project });
  expect(okVerbose.stdout).not.toContain("slow path");
}, 120_000);

test("inside a pi newer than the embedded one, a later delegation of the same pi process runs the compile the first one started", async () => {
  // The running pi: pi's real bundle under a package that says 99.0.0, its cli.js a copy (so the running script's
  // package is this one) that loads the real runtime through a link.
  const real = join(PI_PACKAGE_DIRS.current, "dist");
  const pkg = join(world.root, "running-pi", "node_modules", "@earendil-works", "pi-coding-agent");
  mkdirSync(join(pkg, "dist", "bundle"), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(PI_PACKAGE_DIRS.current, "package.json"), "utf8"));
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ ...manifest, version: "99.0.0" }));
  for (const f of readdirSync(real)) if (f !== "bundle") symlinkSync(join(real, f), join(pkg, "dist", f));
  for (const f of readdirSync(join(real, "bundle")))
    if (f !== "cli.js") symlinkSync(join(real, "bundle", f), join(pkg, "dist", "bundle", f));
  writeFileSync(join(pkg, "dist", "bundle", "cli.js"), readFileSync(join(real, "bundle", "cli.js")));
  const cache = join(world.root, "running-pi-cache");
  caches.push(cache);
  const env = { PATH: `${dirname(NODE24)}:/usr/bin:/bin`, XDG_CACHE_HOME: cache };
  const dir = compiledPiDir(env, readPiPackage(pkg)!, BINARY)!;
  // The extension installed from the executable: its record names the binary whose pi (older) can compile.
  const install = await cli(world, ["install"], { binary: true });
  expect(install.code, install.stderr).toBe(0);

  const wait = `for i in $(seq 900); do [ -f ${join(dir, "ready")} ] || [ -f ${join(dir, "failed")} ] && break; sleep 0.2; done; ls ${dir}`;
  const steps = [
    {
      tool: "delegate_to_subagents",
      args: { tasks: [{ name: "first", prompt: `first in pi ${script([{ text: "one" }])}` }] },
    },
    { tool: "bash", args: { command: wait } },
    {
      tool: "delegate_to_subagents",
      args: { tasks: [{ name: "second", prompt: `second in pi ${script([{ text: "two" }])}` }] },
    },
    { text: "parent done" },
  ];
  const sessionFile = join(world.root, "running-pi-parent.jsonl");
  const proc = Bun.spawn({
    cmd: [NODE24, join(pkg, "dist", "bundle", "cli.js"), "-p", "--session", sessionFile],
    cwd: world.workDir,
    env: { ...world.env, ...env },
    stdin: new TextEncoder().encode(`parent task ${script(steps as never)}`),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect(await proc.exited, stderr).toBe(0);
  expect(marker(dir, "failed"), `compile.log:\n${marker(dir, "compile.log")}`).toBe("");
  const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
  const piOf = (prompt: string) =>
    (
      db.query("SELECT pi FROM runs WHERE prompt LIKE ? ORDER BY id DESC LIMIT 1").get(`${prompt}%`) as {
        pi: string;
      } | null
    )?.pi;
  try {
    expect(piOf("first in pi"), stderr).toStartWith("pi 99.0.0 · node 24.");
    expect(piOf("second in pi"), stderr).toStartWith(`pi 99.0.0 · bun `);
    expect(piOf("second in pi")).toContain(`compiled from ${pkg} (${join(dir, "pi")})`);
  } finally {
    db.close();
  }
}, 240_000);
