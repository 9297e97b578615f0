// The slurm runner on a real single-node Slurm cluster (slurmctld + slurmd + munge from Debian, set up by
// test/support/engines.sh): each child one job step running the executable's embedded pi, against the scripted
// model server. Cancel ends the step and nothing is left in squeue.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, jsonLines, piWorld, REPO, summaryOf, type PiWorld, taskWhy } from "../../support/pi-env.ts";
import { ensureEngine, holdEngine } from "../../support/engines.ts";

let world: PiWorld;
let skip: string | null = null;
let release: (() => Promise<void>) | undefined;
beforeAll(async () => {
  skip = ensureEngine("slurm");
  if (!skip) release = await holdEngine("slurm");
  world = await piWorld();
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
const ours = () =>
  spawnSync("squeue", ["-h", "-o", "%j %T"], { encoding: "utf8" })
    .stdout.split("\n")
    .filter((l) => l.startsWith("subagents-"))
    .join("\n");

test("a child as a job step: reaches the model, writes its folder; with --sandbox too; nothing left in squeue", async () => {
  if (skip) return console.warn(skip);
  for (const sandbox of [false, true]) {
    const marker = `sl${sandbox ? "s" : "p"}${Date.now()}`;
    writeFileSync(join(world.root, ".netrc"), `password secret-${marker}\n`);
    const command = `echo job=$SLURM_JOB_ID; cat "$HOME/.netrc" || echo NO-SECRET; echo ${marker} > made-${marker}.txt`;
    const r = await cli(
      world,
      [
        "run",
        "default",
        `${marker} ${script([{ tool: "bash", args: { command } }, { finalize: { status: "SUCCESS", result: `done ${marker}` } }])}`,
        "--runner",
        "slurm",
        ...(sandbox ? ["--sandbox"] : []),
        "--json",
      ],
      { binary: true },
    );
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    expect(t.output).toBe(`done ${marker}`);
    expect(t.warnings.join("\n")).toContain("runner slurm: no steering");
    const seen = seenBy(marker);
    expect(seen).toMatch(/job=\d+/);
    if (sandbox) expect(seen).not.toContain(`secret-${marker}`);
    else expect(seen).toContain(`secret-${marker}`);
    expect(readFileSync(join(world.workDir, `made-${marker}.txt`), "utf8")).toBe(`${marker}\n`);
  }
  expect(ours()).toBe("");
}, 120_000);

test("Ctrl-C ends the job step: nothing in squeue, no process left", async () => {
  if (skip) return console.warn(skip);
  const marker = `sleep 6${String(Date.now()).slice(-4)}`;
  const task = `hang ${script([{ tool: "bash", args: { command: `${marker}; echo after` } }])}`;
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), "run", "default", task, "--runner", "slurm", "--json"],
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
  expect(ours()).not.toBe("");
  proc.kill("SIGINT");
  expect(await proc.exited).toBe(130);
  const t1 = Date.now();
  while ((ours() || sleeping()) && Date.now() - t1 < 10_000) await Bun.sleep(100);
  expect(ours()).toBe("");
  expect(sleeping()).toBe("");
}, 120_000);

test("a partition on other machines needs the task folder on a shared filesystem: a clear error, nothing submitted", async () => {
  if (skip) return console.warn(skip);
  // sinfo answering with another node stands for a real multi-node cluster (srun and scancel stay the real ones).
  const bin = join(world.root, "fake-sinfo");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "sinfo"), "#!/bin/sh\necho node-elsewhere\n");
  chmodSync(join(bin, "sinfo"), 0o755);
  const r = await cli(world, ["run", "default", "hello", "--runner", "slurm", "--json"], {
    binary: true,
    env: { PATH: `${bin}:${process.env.PATH}` },
  });
  const [t] = summaryOf(r.json);
  expect(t.errorCode).toBe("RUNNER_FAILED");
  expect(t.error).toContain("needs ~/work on a filesystem the compute nodes share"); // home shown as ~
  expect(ours()).toBe("");
}, 60_000);

test("batch submit: a Slurm array job of two shards, each with its own records and results; merge --wait gathers them", async () => {
  if (skip) return console.warn(skip);
  const items = join(world.root, "array-items.jsonl");
  writeFileSync(items, Array.from({ length: 6 }, (_, i) => JSON.stringify({ id: `a${i}` })).join("\n"));
  const out = join(world.root, "array-out.jsonl");
  const submit = await cli(
    world,
    [
      "batch",
      "submit",
      items,
      "--prompt",
      "array item {{id}} on $SLURM_JOB_ID",
      "--slurm",
      "2",
      "--out",
      out,
      "--json",
    ],
    { binary: true },
  );
  expect(submit.code, submit.stderr).toBe(0);
  const { job, slurmJob } = submit.json[0];
  expect(slurmJob).toMatch(/^\d+$/);
  const merged = join(world.root, "array-merged.jsonl");
  const merge = await cli(world, ["batch", "merge", "--job", job, "--out", merged, "--wait"], { binary: true });
  const logs = [1, 2]
    .map((i) => `${out}.${i}.log`)
    .map((f) => (existsSync(f) ? readFileSync(f, "utf8") : `${f}: none`));
  expect(merge.code, `${merge.stderr}\n${logs.join("\n")}`).toBe(0);
  const got = readFileSync(merged, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(got.map((l) => l.id).sort()).toEqual(["a0", "a1", "a2", "a3", "a4", "a5"]);
  expect(got.every((l) => l.status === "completed")).toBe(true);
  // Each shard ran as one array task, with its own records beside its results.
  for (const i of [1, 2]) expect(existsSync(`${out}.${i}.db`)).toBe(true);
  // Where it was submitted, status and export read the shards' results (they had shown 0/0 and nothing).
  const status = await cli(world, ["batch", "status", job, "--json"], { binary: true });
  expect(status.json[0]).toMatchObject({
    status: "done",
    counts: { completed: 6, failed: 0, pending: 0, total: 6 },
    slurm: { jobId: slurmJob, shards: 2, state: "ended" },
  });
  expect(
    status.json[0].shards.map((s: { completed: number }) => s.completed).reduce((a: number, b: number) => a + b),
  ).toBe(6);
  const exported = await cli(world, ["batch", "export", job], { binary: true });
  expect(
    jsonLines(exported.stdout)
      .map((l) => l.id)
      .sort(),
  ).toEqual(["a0", "a1", "a2", "a3", "a4", "a5"]);
  expect(ours()).toBe("");
}, 180_000);
