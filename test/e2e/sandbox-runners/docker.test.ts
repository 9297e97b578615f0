// The docker runner with a real dockerd and an image built with debootstrap (test/support/engines.sh): one
// container per child running the executable's embedded pi, against the scripted model server on 127.0.0.1
// (host network). Every end path removes the container.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, REPO, summaryOf, type PiWorld, taskWhy } from "../../support/pi-env.ts";
import { ensureEngine, holdEngine, sessionOfPrompt, untilSleeping } from "../../support/engines.ts";

let world: PiWorld;
let skip: string | null = null;
let release: (() => Promise<void>) | undefined;
beforeAll(async () => {
  skip = ensureEngine("docker");
  if (!skip) release = await holdEngine("docker");
  world = await piWorld();
  world.setSubagentSettings({ docker: { image: "subagents-test/base" } });
  // A fresh CI machine installs the engine here first (apt, daemons, for docker an image): minutes, not 60 s.
}, 600_000);
afterAll(async () => {
  await world?.close();
  await release?.();
});

const transcript = (q: { messages?: { content?: unknown }[] }) => JSON.stringify(q.messages ?? []);
const seenBy = (marker: string) =>
  world.server.requests
    .filter((q) => transcript(q).includes(marker))
    .map(transcript)
    .join("\n");
const containers = () =>
  spawnSync("docker", ["ps", "-aq", "--filter", "name=subagents-"], { encoding: "utf8" }).stdout.trim();
/** One bash command in a container child, then finalize. */
const inContainer = (marker: string, command: string, opts: Parameters<typeof cli>[2] = {}) =>
  cli(
    world,
    [
      "run",
      "default",
      `${marker} ${script([{ tool: "bash", args: { command } }, { finalize: { status: "SUCCESS", result: `done ${marker}` } }])}`,
      "--runner",
      "docker",
      "--json",
    ],
    { binary: true, ...opts },
  );

test("a child in a container: reaches the model, writes its folder, sees no home, leaves no container", async () => {
  if (skip) return console.warn(skip);
  const marker = `dk${Date.now()}`;
  writeFileSync(join(world.root, ".netrc"), `password secret-${marker}\n`);
  const command = `grep PRETTY /etc/os-release; cat "$HOME/.netrc" || echo NO-SECRET; echo ${marker} > made.txt; echo x > /etc/x-${marker} || echo NO-ETC`;
  const r = await inContainer(marker, command);
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t, r)).toBe("completed");
  expect(t.output).toBe(`done ${marker}`);
  expect(t.warnings.join("\n")).toContain("runner docker: no steering");
  const seen = seenBy(marker);
  expect(seen).toContain("Debian GNU/Linux 12");
  expect(seen).toContain("NO-SECRET");
  expect(seen).not.toContain(`secret-${marker}`);
  expect(seen).toContain("NO-ETC");
  expect(readFileSync(join(world.workDir, "made.txt"), "utf8")).toBe(`${marker}\n`);
  expect(containers()).toBe("");
}, 120_000);

test("Ctrl-C removes the container and everything in it", async () => {
  if (skip) return console.warn(skip);
  const marker = `sleep 4${String(Date.now()).slice(-4)}`;
  const task = `hang ${script([{ tool: "bash", args: { command: `${marker}; echo after` } }])}`;
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), "run", "default", task, "--runner", "docker", "--json"],
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const sleeping = () =>
    spawnSync("pgrep", ["-f", `^${marker}`])
      .stdout.toString()
      .trim();
  const t0 = Date.now();
  while (!sleeping() && Date.now() - t0 < 60_000) await Bun.sleep(100);
  expect(sleeping()).not.toBe("");
  expect(containers()).not.toBe("");
  proc.kill("SIGINT");
  expect(await proc.exited).toBe(130);
  expect(containers()).toBe("");
  expect(sleeping()).toBe("");
}, 120_000);

test("an owner killed with SIGKILL leaves a container; the next docker child removes it", async () => {
  if (skip) return console.warn(skip);
  const marker = `sleep 5${String(Date.now()).slice(-4)}`;
  const task = `hang ${script([{ tool: "bash", args: { command: `${marker}; echo after` } }])}`;
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), "run", "default", task, "--runner", "docker", "--json"],
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const sleeping = () =>
    spawnSync("pgrep", ["-f", `^${marker}`])
      .stdout.toString()
      .trim();
  const t0 = Date.now();
  while (!sleeping() && Date.now() - t0 < 60_000) await Bun.sleep(100);
  proc.kill("SIGKILL");
  await proc.exited;
  expect(containers()).not.toBe("");
  const r = await cli(world, ["run", "default", "again", "--runner", "docker", "--json"], { binary: true });
  expect(summaryOf(r.json)[0].status, taskWhy(summaryOf(r.json)[0])).toBe("completed");
  expect(containers()).toBe("");
  expect(sleeping()).toBe("");
}, 120_000);

test("from source (no single-file executable to mount) the docker runner says why, and runs nothing", async () => {
  if (skip) return console.warn(skip);
  const r = await cli(world, ["run", "default", "hello", "--runner", "docker", "--json"]);
  const [t] = summaryOf(r.json);
  expect(t.errorCode).toBe("RUNNER_FAILED");
  expect(t.error).toContain("runs the pi built into the subagents executable");
  expect(existsSync(join(world.workDir, "nothing"))).toBe(false);
}, 60_000);

test("steering a container child is refused with the reason (only stdin/stdout cross docker run)", async () => {
  if (skip) return console.warn(skip);
  const marker = `sleep 3.${String(Date.now()).slice(-4)}`;
  const run = cli(
    world,
    [
      "run",
      "default",
      `steer me ${script([{ tool: "bash", args: { command: `${marker}; echo after` } }, { finalize: { status: "SUCCESS", result: "ran" } }])}`,
      "--runner",
      "docker",
      "--json",
    ],
    { binary: true },
  );
  expect(await untilSleeping(marker)).toBe(true);
  const id = sessionOfPrompt(world.env.SUBAGENTS_DB, marker)!;
  const s = await cli(world, ["steer", id, "change of plan"], { binary: true });
  expect(s.code).toBe(1);
  expect(s.stderr).toContain("no control channel");
  expect(s.stderr).toContain("docker/slurm runner");
  expect(summaryOf((await run).json)[0].status).toBe("completed");
  expect(containers()).toBe("");
}, 120_000);

test("a container child writes its copy only: a git hook, a git config or a project pi extension stay there; its own files come back", async () => {
  if (skip) return console.warn(skip);
  const marker = `dg${Date.now()}`;
  const repo = join(world.root, `repo-${marker}`);
  spawnSync("git", ["init", "-q", repo]);
  const configBefore = readFileSync(join(repo, ".git", "config"), "utf8");
  const say = (w: string) => `echo ${w.toLowerCase()} | tr a-z A-Z`;
  const command = [
    `echo 'touch /x' > .git/hooks/pre-commit || ${say("no-hook")}`,
    `printf '[core]\\n\\tfsmonitor = touch /x\\n' >> .git/config || ${say("no-config")}`,
    `mkdir -p .pi/extensions || ${say("no-ext")}`,
    `echo ${marker} > made.txt`,
  ].join("; ");
  const r = await inContainer(marker, command, { cwd: repo });
  const [t] = summaryOf(r.json);
  expect(t.status, r.stderr).toBe("completed");
  expect(existsSync(join(repo, ".git", "hooks", "pre-commit"))).toBe(false);
  expect(readFileSync(join(repo, ".git", "config"), "utf8")).toBe(configBefore);
  expect(existsSync(join(repo, ".pi", "extensions"))).toBe(false);
  expect(readFileSync(join(repo, "made.txt"), "utf8")).toBe(`${marker}\n`);
  const warned = (t.warnings ?? []).join("\n");
  expect(warned).toContain(".pi — protected");
  expect(warned).toContain("the task got a copy of its folder");
  expect(containers()).toBe("");
}, 120_000);

test("a container child gets the same boundary: a credentials copy (its provider, the !command run outside), no records, no other session, a planted repository made harmless", async () => {
  if (skip) return console.warn(skip);
  const marker = `db${Date.now()}`;
  const env = { SUBAGENTS_DB: "" };
  const secret = `earlier-${marker}`;
  const earlier = await cli(world, ["run", "default", `${secret} ${script([{ text: "fine" }])}`, "--json"], {
    binary: true,
    env,
  });
  expect(summaryOf(earlier.json)[0].status).toBe("completed");
  const auth = join(world.agentDir, "auth.json");
  const before = JSON.stringify({
    fake: { type: "api_key", key: `!printf sk-docker-${marker}` },
    other: { type: "api_key", key: `sk-other-${marker}` },
  });
  writeFileSync(auth, before, { mode: 0o600 });
  try {
    const a = world.agentDir;
    const command = [
      `cat "${a}/auth.json"; echo`,
      `echo AGENT-DIR: $(ls -A "${a}" | tr '\\n' ' ')`,
      `cat "${a}"/subagent-sessions/*/* | head -c 4000`,
      `echo '{"fake":{"type":"api_key","key":"!touch /tmp/x; printf sk-planted"}}' > "${a}/auth.json"`,
      // The image has no git: the repository is written by hand, as git init would lay it out.
      `mkdir -p nested/.git/objects nested/.git/refs && echo 'ref: refs/heads/main' > nested/.git/HEAD && printf '[core]\\n\\tbare = false\\n\\tfsmonitor = touch /x\\n' > nested/.git/config`,
    ].join("; ");
    const r = await inContainer(marker, command, { env });
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    const out = world.server.requests
      .filter((q) => transcript(q).includes(marker))
      .flatMap((q) => (q.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content)))
      .join("\n");
    expect(out, out.slice(-1500)).toContain(`sk-docker-${marker}`);
    expect(out).not.toContain(`sk-other-${marker}`);
    expect(out).not.toContain("!printf");
    const listed = /AGENT-DIR: (.*)/.exec(out)?.[1] ?? "";
    for (const hidden of ["control", "logs", "subagents.db"]) expect(listed, listed).not.toContain(hidden);
    expect(out).not.toContain(secret);
    expect(readFileSync(auth, "utf8")).toBe(before);
    const warned = (t.warnings ?? []).join("\n");
    // What it wrote into its own auth.json went with it (never read back): the user's file is as it was (above).
    expect(warned).toContain("nested/.git — git data");
    expect(existsSync(join(world.workDir, "nested", ".git"))).toBe(false);
    expect(containers()).toBe("");
  } finally {
    writeFileSync(auth, "{}");
  }
}, 120_000);
