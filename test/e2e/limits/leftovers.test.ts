// Nothing a sub-agent's commands start outlives its run (core/run/process/marks.ts, leftovers.ts): the executable's
// embedded pi as child against the scripted model, whose bash starts `sleep` in the background, double-forked and
// under setsid. Each test uses sleep durations of its own so pgrep finds only its processes; a test ends whatever
// it finds in its afterAll, so a failure here never leaves sleeps behind.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { script } from "../../../src/scripted/model-server.ts";
import { startHarnessServer } from "../../../src/scripted/harness-servers.ts";
import { cli, piWorld, REPO, type PiWorld, until } from "../../support/pi-env.ts";
import { ensureEngine, holdEngine } from "../../support/engines.ts";
import { configureHarness, ensureHarnessCli, QUIET_ENV } from "../../support/harness-clis.ts";

let world: PiWorld;
const used: string[] = [];
beforeAll(async () => {
  world = await piWorld();
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "server-keeper.md"),
    "---\nname: server-keeper\ndescription: Starts a server and leaves it running\nkeepProcesses: true\n---\nWork.\n",
  );
});
afterAll(async () => {
  for (const n of used) spawnSync("pkill", ["-KILL", "-f", `^sleep ${n}$`]);
  await world.close();
});

/** A sleep duration no other test uses: pgrep matches exactly `sleep N`. */
let next = 4100 + Math.floor(Math.random() * 500) * 10;
const unique = () => {
  const n = String(next++);
  used.push(n);
  return n;
};
const pids = (n: string): number[] =>
  spawnSync("pgrep", ["-f", `^sleep ${n}$`], { encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean)
    .map(Number);
/** bash that leaves `sleep a` in the background and `sleep b` double-forked under setsid, then returns at once. */
const leave = (a: string, b: string) => ({
  tool: "bash",
  args: { command: `sleep ${a} >/dev/null 2>&1 & (setsid sleep ${b} >/dev/null 2>&1 &); echo started` },
});
const done = { finalize: { status: "SUCCESS", result: "done" } };
const why = (r: { stderr: string; stdout: string }) =>
  `stdout: ${r.stdout.slice(-1500)}\nstderr: ${r.stderr.slice(-1500)}`;

test("a completed run ends the background and setsid processes its bash left, and its record names them (--json, session)", async () => {
  const [a, b] = [unique(), unique()];
  const r = await cli(world, ["run", "default", "--json", `leave two ${script([leave(a, b), done])}`], {
    binary: true,
  });
  expect(r.code, why(r)).toBe(0);
  const end = r.json.find((e) => e.type === "task_end");
  expect(end?.status, why(r)).toBe("completed");
  const warning = (end?.warnings ?? []).find((w: string) => w.startsWith("left 2 processes running"));
  expect(warning, why(r)).toMatch(new RegExp(`pid \\d+ \`sleep ${a}\``));
  expect(warning).toMatch(new RegExp(`pid \\d+ \`sleep ${b}\``));
  // Ended with the run: the CLI returned after the kill protocol.
  expect(pids(a)).toEqual([]);
  expect(pids(b)).toEqual([]);
  const session = await cli(world, ["session", end!.sessionId], { binary: true });
  expect(session.stdout, why(session)).toContain(`sleep ${b}`);
}, 120_000);

test("two tasks at concurrency 1 share a kept child, and the second task's pgrep does not see the first one's leftovers", async () => {
  const [a, b] = [unique(), unique()];
  const first = `first ${script([leave(a, b), done])}`;
  // The second task reports what pgrep saw, as its result.
  const second = `second ${script([{ tool: "bash", args: { command: `echo "seen:$(pgrep -f '^sleep (${a}|${b})$' | tr '\\n' ,)"` } }, { finalize: { status: "SUCCESS", result: "checked" } }])}`;
  const r = await cli(world, ["delegate", "--json", "--concurrency", "1", first, second], { binary: true });
  expect(r.code, why(r)).toBe(0);
  const ends = r.json.filter((e) => e.type === "task_end");
  expect(
    ends.map((e) => e.status),
    why(r),
  ).toEqual(["completed", "completed"]);
  expect(ends[0].warnings?.join(" "), why(r)).toContain(`sleep ${b}`);
  // The second task ran in the first one's process (kept child), and its bash saw nothing of the first.
  expect(r.stdout, why(r)).toContain("seen:");
  expect(r.stdout).not.toMatch(/seen:\d/);
  expect(pids(a)).toEqual([]);
  expect(pids(b)).toEqual([]);
}, 120_000);

/** Starts the CLI on a task that leaves two sleeps, then waits in bash; resolves once both sleeps run. */
async function startLeaving(a: string, b: string, wait: string, extra: string[] = []) {
  const proc = Bun.spawn({
    cmd: [
      join(REPO, "dist", "subagents"),
      "run",
      ...extra,
      "default",
      `leave then wait ${script([leave(a, b), { tool: "bash", args: { command: `sleep ${wait} >/dev/null` } }, done])}`,
    ],
    cwd: world.workDir,
    env: world.env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await until(`sleep ${a} and sleep ${b} to start`, () => pids(a).length === 1 && pids(b).length === 1, 60_000);
  return { proc, out };
}

test.each([
  ["SIGINT (Ctrl-C)", "SIGINT"],
  ["SIGTERM", "SIGTERM"],
] as const)(
  "%s of a run whose bash double-forked earlier ends those processes too",
  async (_name, signal) => {
    const [a, b, wait] = [unique(), unique(), unique()];
    const { proc, out } = await startLeaving(a, b, wait);
    proc.kill(signal);
    const code = await proc.exited;
    const [stdout, stderr] = await out;
    expect(code, `stdout: ${stdout.slice(-1000)}\nstderr: ${stderr.slice(-1000)}`).toBe(
      signal === "SIGINT" ? 130 : 143,
    );
    expect(pids(a)).toEqual([]);
    expect(pids(b)).toEqual([]);
    expect(pids(wait)).toEqual([]);
  },
  120_000,
);

test("an owner killed with SIGKILL: its child ends what its commands left within seconds, then itself", async () => {
  const [a, b, wait] = [unique(), unique(), unique()];
  const { proc, out } = await startLeaving(a, b, wait);
  proc.kill("SIGKILL");
  await proc.exited;
  await out;
  // The child notices its owner is gone within a second, then runs the kill protocol (SIGTERM, up to 5 s).
  await until(
    `sleep ${a} and sleep ${b} to end after the owner's SIGKILL`,
    () => !pids(a).length && !pids(b).length,
    45_000,
  );
  await until(`the child's own bash command (sleep ${wait}) to end`, () => !pids(wait).length, 45_000);
}, 120_000);

test("keepProcesses: true keeps them, records their pids and how to stop them; `subagents cancel ID` ends them", async () => {
  const [a, b] = [unique(), unique()];
  const r = await cli(world, ["run", "server-keeper", "--json", `keep two ${script([leave(a, b), done])}`], {
    binary: true,
  });
  expect(r.code, why(r)).toBe(0);
  const end = r.json.find((e) => e.type === "task_end")!;
  const warning = (end.warnings ?? []).find((w: string) => w.startsWith("kept 2 processes running on purpose"));
  expect(warning, why(r)).toContain(`subagents cancel ${end.sessionId}`);
  expect(pids(a).length).toBe(1);
  expect(pids(b).length).toBe(1);
  expect(warning).toContain(`pid ${pids(b)[0]} \`sleep ${b}\``);
  const cancel = await cli(world, ["cancel", end.sessionId], { binary: true });
  expect(cancel.code, why(cancel)).toBe(0);
  expect(cancel.stdout).toContain(`ended 2 processes kept by ${end.sessionId}`);
  expect(pids(a)).toEqual([]);
  expect(pids(b)).toEqual([]);
}, 120_000);

// The runners: a container's processes end with its pid namespace (docker --init, the container removed on every end
// path); a Slurm step's double-forked processes escape proctrack/linuxproc and are found by their mark, which
// crosses srun with the rest of the environment (here the compute node is this machine).
test.each([["docker"], ["slurm"]] as const)(
  "runner %s: a completed run leaves none of its commands' processes running",
  async (runner) => {
    const skip = ensureEngine(runner);
    if (skip) return console.warn(`*** SKIPPING: ${skip}`);
    const release = await holdEngine(runner);
    if (runner === "docker") world.setSubagentSettings({ docker: { image: "subagents-test/base" } });
    try {
      const [a, b] = [unique(), unique()];
      const r = await cli(
        world,
        ["run", "default", "--runner", runner, "--json", `leave on ${runner} ${script([leave(a, b), done])}`],
        { binary: true },
      );
      const end = r.json.find((e) => e.type === "task_end");
      expect(end?.status, why(r)).toBe("completed");
      await until(
        `sleep ${a} and sleep ${b} to be gone after the ${runner} run`,
        () => !pids(a).length && !pids(b).length,
        45_000,
      );
      if (runner === "slurm") expect(end?.warnings?.join(" "), why(r)).toContain(`sleep ${b}`);
    } finally {
      world.setSubagentSettings({});
      await release();
    }
  },
  600_000,
);

test("another harness's CLI as child (opencode): what its bash left is ended and recorded", async () => {
  const got = await ensureHarnessCli("opencode");
  if ("skip" in got) return console.warn(`*** SKIPPING: ${got.skip}`);
  const harness = await startHarnessServer();
  try {
    const env = {
      ...QUIET_ENV,
      ...configureHarness("opencode", world.root, { origin: harness.origin, chatBaseUrl: world.server.baseUrl }),
      PATH: `${got.binDir}:${world.env.PATH}`,
    };
    const [a, b] = [unique(), unique()];
    const bash = {
      tool: "bash",
      args: {
        command: `sleep ${a} >/dev/null 2>&1 & (setsid sleep ${b} >/dev/null 2>&1 &); echo started`,
        description: "start",
      },
    };
    const r = await cli(
      world,
      [
        "run",
        "default",
        "--runtime",
        "opencode",
        "--model",
        "scripted/fake-model",
        "--json",
        `leave ${script([bash, { text: "done" }])}`,
      ],
      { env },
    );
    const end = r.json.find((e) => e.type === "task_end");
    expect(end?.status, why(r)).toBe("completed");
    expect(end?.warnings?.join(" "), why(r)).toContain(`sleep ${b}`);
    expect(pids(a)).toEqual([]);
    expect(pids(b)).toEqual([]);
  } finally {
    await harness.close();
  }
}, 600_000);
