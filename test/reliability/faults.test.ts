// Reliability: faults with real processes and the real pi — a parent killed without cleanup, provider
// failures, missing or broken pieces of the environment, and several writers on one database.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { script } from "../../src/scripted/model-server.ts";
import { BUN, cli, piCmd, piWorld, REPO, type PiWorld, summaryOf, until, taskWhy } from "../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const running = (needle: string) =>
  spawnSync("pgrep", ["-f", needle], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);

test("the CLI killed with SIGKILL: its children notice and stop; the next start marks the session interrupted", async () => {
  const tag = `${Date.now() % 100000}.${Math.floor(Math.random() * 1000)}`;
  const proc = Bun.spawn({
    cmd: [
      BUN,
      join(REPO, "src/cli/main.ts"),
      "delegate",
      `orphan ${script([{ tool: "bash", args: { command: `sleep 6${tag}` } }])}`,
      "--json",
    ],
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "ignore",
  });
  const reader = proc.stdout.getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  const sessionId = JSON.parse(first.split("\n")[0]).sessionId as string;
  await until("the child's command running", () => running(`^sleep 6${tag}`).length > 0);
  expect(running(`^sleep 6${tag}`).length).toBe(1);
  const childPi = running(`PI_SUBAGENT|pi-coding-agent/dist/bun/cli.js`);
  proc.kill("SIGKILL");
  await proc.exited;
  // The child extension polls its parent once a second, then stops pi, which kills its bash commands.
  await until("the child's command gone", () => running(`^sleep 6${tag}`).length === 0, 30_000).catch(() => {}); // the expect below says what is left
  expect(running(`^sleep 6${tag}`)).toEqual([]);
  void childPi;
  const list = await cli(world, ["sessions", "--json"]);
  expect(list.json.find((r) => r.id === sessionId)?.status).toBe("error");
  const s = await cli(world, ["session", sessionId]);
  expect(s.stdout).toContain("Session was interrupted (main agent session ended unexpectedly)");
}, 60_000);

test("provider 500s: pi retries, then the run fails with the provider's message kept", async () => {
  world.setSubagentSettings({}, { retry: { enabled: true, maxRetries: 2, baseDelayMs: 50 } });
  const before = world.server.requests.length;
  const r = await cli(world, [
    "run",
    "default",
    `flaky ${script([
      { status: 500, message: "scripted outage 9090" },
      { status: 500, message: "scripted outage 9090" },
      { status: 500, message: "scripted outage 9090" },
    ])}`,
    "--json",
  ]);
  const [t] = summaryOf(r.json);
  expect(t.status).toBe("error");
  expect(t.error).toContain("scripted outage 9090");
  // The first call and pi's two retries (each may be retried once more by the HTTP client itself).
  expect(world.server.requests.length - before).toBeGreaterThanOrEqual(3);
  expect(r.json.filter((e) => e.type === "message").length).toBeGreaterThanOrEqual(1);
  // Each of pi's retries is told as it starts (what a window shows as `↻ retry 1/2 in 0s — …`).
  expect(r.json.filter((e) => e.type === "retry").map((e) => [e.attempt, e.maxAttempts, e.error])).toEqual([
    [1, 2, expect.stringContaining("scripted outage 9090")],
    [2, 2, expect.stringContaining("scripted outage 9090")],
  ]);
  world.setSubagentSettings({});
}, 60_000);

test("a 500 followed by success: the retry is not mistaken for the end", async () => {
  world.setSubagentSettings({}, { retry: { enabled: true, maxRetries: 2, baseDelayMs: 50 } });
  const r = await cli(world, [
    "run",
    "default",
    `recovers ${script([{ status: 503, message: "busy", times: 1, then: { finalize: { status: "SUCCESS", result: "second try worked" } } }])}`,
    "--json",
  ]);
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t)).toBe("completed");
  expect(t.output).toBe("second try worked");
  world.setSubagentSettings({});
}, 60_000);

test("a stream cut mid-answer ends as an error with a message, never a hang", async () => {
  world.setSubagentSettings({}, { retry: { enabled: false } });
  const r = await cli(world, ["run", "default", `cut ${script([{ cut: true, text: "half an ans" }])}`, "--json"]);
  const [t] = summaryOf(r.json);
  expect(t.status).toBe("error");
  expect(t.error.length).toBeGreaterThan(0);
  world.setSubagentSettings({});
}, 60_000);

test("pi missing: one clear configuration error, exit 2", async () => {
  const bad = await cli(world, ["run", "default", "x"], { env: { SUBAGENTS_PI: "/nonexistent/pi" } });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('SUBAGENTS_PI is set to "/nonexistent/pi"');
  expect(bad.stderr).not.toContain("    at ");
  // The binary's own pi is always there; a user who chose their system pi and has none gets the install command.
  world.setSubagentSettings({ childPi: "system" });
  try {
    const outside = mkdtempSync(join(tmpdir(), "no-pi-"));
    const none = await cli(world, ["run", "default", "x"], {
      binary: true,
      cwd: outside,
      env: { PATH: "/usr/bin:/bin", HOME: outside },
    });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("Cannot find pi");
    expect(none.stderr).toContain("`pi` on PATH");
    expect(none.stderr).toContain("npm install -g @earendil-works/pi-coding-agent");
    expect(none.stderr).not.toContain("    at ");
  } finally {
    world.setSubagentSettings({});
  }
}, 30_000);

test("an incompatible pi (rejects our flags): the task fails with pi's own words, no hang", async () => {
  const fake = join(world.root, "old-pi.sh");
  writeFileSync(fake, "#!/bin/sh\necho 'Error: unknown option --session' >&2\nexit 1\n");
  chmodSync(fake, 0o755);
  const r = await cli(world, ["run", "default", "x", "--json"], { env: { SUBAGENTS_PI: fake } });
  expect(r.code).toBe(1);
  const [t] = summaryOf(r.json);
  expect(t.errorCode).toBe("SUBAGENT_FAILED");
  expect(t.error).toContain("unknown option --session");
}, 30_000);

test("the cwd removed while the child runs: the run ends with a recorded error", async () => {
  const marker = `vanishing-${Date.now()}`;
  const dir = join(world.root, marker);
  mkdirSync(dir);
  const run = cli(world, [
    "run",
    "default",
    `work ${marker} ${script([{ tool: "bash", args: { command: "sleep 2" } }, { tool: "bash", args: { command: "ls" } }, { finalize: { status: "SUCCESS", result: "done anyway" } }])}`,
    "--cwd",
    dir,
    "--json",
  ]);
  // Removed once the child runs in it (its first model request came), not after a guess of how long a start takes:
  // on a busy machine the CLI had not even checked the folder after 700 ms, and refused it as missing.
  await until(`the child working in ${dir} to ask the model`, () =>
    world.server.requests.some((q) => JSON.stringify(q.messages ?? []).includes(`work ${marker}`)),
  );
  rmSync(dir, { recursive: true, force: true });
  const r = await run;
  const [t] = summaryOf(r.json);
  expect(["completed", "error"]).toContain(t.status);
  const list = await cli(world, ["sessions", "--json"]);
  expect(list.json.find((x) => x.id === t.sessionId)?.status).toBe(t.status);
}, 30_000);

test("database unwritable or corrupt: one clear error, exit 2, no stack trace", async () => {
  const notADir = join(world.root, "plain-file");
  writeFileSync(notADir, "x");
  const r1 = await cli(world, ["sessions"], { env: { SUBAGENTS_DB: join(notADir, "db.sqlite") } });
  expect(r1.code).toBe(2);
  expect(r1.stderr).toContain("cannot open the session database");
  expect(r1.stderr).not.toContain("    at ");
  const corrupt = join(world.root, "corrupt.db");
  writeFileSync(corrupt, "this is not a database, just text ".repeat(200));
  const r2 = await cli(world, ["sessions"], { env: { SUBAGENTS_DB: corrupt } });
  expect(r2.code).toBe(2);
  expect(r2.stderr).toContain(`the session database ${corrupt} is damaged`);
  expect(r2.stderr).not.toContain("    at ");
}, 30_000);

test("a background start whose store cannot record its tasks (read-only, as an unprivileged user) fails before it says started; nothing is left running", async () => {
  // A store its user may read but not write: as root the command runs as nobody (root writes anywhere), else as
  // this user with the file made read-only.
  const root = mkdtempSync(join(tmpdir(), "ro-store-"));
  for (const d of ["agent", "data", "work"]) mkdirSync(join(root, d));
  chmodSync(root, 0o755);
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: root,
    PI_CODING_AGENT_DIR: join(root, "agent"),
    SUBAGENTS_DB: join(root, "data", "subagents.db"),
    SUBAGENTS_TEST_WORLD: world.env.SUBAGENTS_TEST_WORLD,
  };
  const bin = join(REPO, "dist", "subagents");
  const made = spawnSync(bin, ["sessions"], { cwd: join(root, "work"), env, encoding: "utf8" });
  expect(made.status, made.stderr).toBe(0);
  chmodSync(env.SUBAGENTS_DB, 0o444);
  const asRoot = process.getuid?.() === 0;
  if (asRoot) spawnSync("chown", ["65534", join(root, "data")]);
  const cmd = [...(asRoot ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []), bin];
  try {
    const r = spawnSync(cmd[0], [...cmd.slice(1), "delegate", "--background", "--json", "one", "two"], {
      cwd: join(root, "work"),
      env,
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stdout).toBe("");
    // Refused by the call's check that its records can be written, before the supervisor is even started.
    expect(r.stderr).toMatch(/STORE_FAILED: the session database .* cannot be written by this user/);
    expect(r.stderr).toMatch(/readonly|read-only/);
    expect(r.stderr).not.toContain("    at ");
    // Its supervisor ended with it: no process of this store is left.
    // (Its command line names its job file, under this store's folder.)
    await until("the supervisor to exit", () => running(root).length === 0, 15_000).catch(() => {});
    expect(running(root)).toEqual([]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}, 60_000);

test("three CLI processes × 4 tasks and a pi parent with the extension, one database: every session recorded", async () => {
  const db = join(world.root, `shared-${Date.now()}.db`);
  const env = { SUBAGENTS_DB: db };
  const clis = [0, 1, 2].map((i) =>
    cli(world, ["delegate", ...[0, 1, 2, 3].map((j) => `load ${i}-${j}`), "--json"], { env }),
  );
  const parent = Bun.spawn({
    cmd: [...piCmd("current", "bun"), "-p", "--no-session", "-e", join(REPO, "dist", "extension.js")],
    cwd: world.workDir,
    env: { ...world.env, ...env },
    stdin: new TextEncoder().encode(
      `p ${script([
        {
          tool: "delegate_to_subagents",
          args: {
            tasks: [
              { name: "x", prompt: "from pi 1" },
              { name: "y", prompt: "from pi 2" },
            ],
          },
        },
        { text: "ok" },
      ])}`,
    ),
    stdout: "ignore",
    stderr: "pipe",
  });
  const results = await Promise.all(clis);
  expect(await parent.exited).toBe(0);
  for (const r of results) {
    expect(r.stderr).not.toContain("SQLITE_BUSY");
    expect(summaryOf(r.json).every((t) => t.status === "completed")).toBe(true);
  }
  const list = await cli(world, ["sessions", "--limit", "100", "--json"], { env });
  expect(list.json.length).toBe(14);
  expect(list.json.every((r) => r.status === "completed")).toBe(true);
}, 90_000);

test("a parent pi killed with SIGKILL: its sub-agents stop by themselves; the next start marks them interrupted", async () => {
  const tag = `${Date.now() % 100000}.${Math.floor(Math.random() * 1000)}`;
  const inner = `[[script:[{"tool":"bash","args":{"command":"sleep 7${tag}"}}]]]`;
  const parent = Bun.spawn({
    cmd: [...piCmd("current", "bun"), "-p", "--no-session", "-e", join(REPO, "dist", "extension.js")],
    cwd: world.workDir,
    env: world.env,
    stdin: new TextEncoder().encode(
      `p ${script([{ tool: "delegate_to_subagents", args: { tasks: [{ name: "orphaned", prompt: `sleep ${inner}` }] } }])}`,
    ),
    stdout: "ignore",
    stderr: "ignore",
  });
  await until("the child's command running", () => running(`^sleep 7${tag}`).length > 0);
  expect(running(`^sleep 7${tag}`).length).toBe(1);
  parent.kill("SIGKILL");
  await parent.exited;
  await until("the child's command gone", () => running(`^sleep 7${tag}`).length === 0, 30_000).catch(() => {}); // the expect below says what is left
  expect(running(`^sleep 7${tag}`)).toEqual([]);
  const list = await cli(world, ["sessions", "--limit", "5", "--json"]);
  const row = list.json.find((r) => r.name === "orphaned");
  expect(row?.status).toBe("error");
  const s = await cli(world, ["session", row!.id]);
  expect(s.stdout).toContain("Session was interrupted (main agent session ended unexpectedly)");
}, 60_000);
