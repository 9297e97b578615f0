// The sandbox with the real bubblewrap and the real pi as child (the executable's embedded pi and pi from
// node_modules), against the scripted model server on 127.0.0.1.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piWorld, REPO, summaryOf, type PiWorld, taskWhy, requestsOfTask } from "../../support/pi-env.ts";
import { ensureEngine, sessionOfPrompt, untilSleeping } from "../../support/engines.ts";
import { gitIn, makeRepo } from "../../support/git-repo.ts";
import { runParentPi } from "../../support/parent-pi.ts";

let world: PiWorld;
let skip: string | null = null;
beforeAll(async () => {
  skip = ensureEngine("bwrap");
  world = await piWorld();
  // A fresh CI machine installs the engine here first (apt, daemons, for docker an image): minutes, not 60 s.
}, 600_000);
afterAll(() => world?.close());

const transcript = (q: { messages?: { content?: unknown }[] }) => JSON.stringify(q.messages ?? []);
const requestsWith = (marker: string) => world.server.requests.filter((q) => transcript(q).includes(marker));

/** One bash command, then finalize with what it printed. */
const probe = (marker: string, command: string) =>
  `probe ${marker} ${script([{ tool: "bash", args: { command } }, { finalize: { status: "SUCCESS", result: `done ${marker}` } }])}`;

function secretProbe(marker: string) {
  const secret = `s3cret-${marker}`;
  writeFileSync(join(world.root, ".netrc"), `machine x password ${secret}\n`);
  const outside = join(world.root, `outside-${marker}.txt`);
  const command = [
    // As root with any capability left, the hidden home could be unmounted and read.
    `umount -l "$HOME" 2>/dev/null; umount -l "$HOME" 2>/dev/null; cat "$HOME/.netrc" || echo NO-SECRET`,
    `echo w > "${outside}" || echo NO-OUTSIDE`,
    `echo w > /etc/sbx-${marker} || echo NO-ETC`,
    `echo inside > "$PWD/inside-${marker}.txt" && echo YES-INSIDE`,
    `echo t > /tmp/t-${marker} && echo YES-TMP`,
  ].join("; ");
  return { secret, outside, task: probe(marker, command) };
}

for (const binary of [true, false]) {
  test(`sandboxed child (${binary ? "embedded pi" : "pi from source/node_modules"}): home hidden, writes only in its folder, reaches the model`, async () => {
    if (skip) return console.warn(skip);
    const marker = `m${binary ? "b" : "s"}${Date.now()}`;
    const p = secretProbe(marker);
    const r = await cli(world, ["run", "default", p.task, "--sandbox", "--json"], { binary });
    const [t] = summaryOf(r.json);
    expect(t.status, taskWhy(t, r)).toBe("completed");
    expect(t.output).toContain(`done ${marker}`);
    const seen = requestsWith(marker).map(transcript).join("\n");
    expect(seen).toContain("NO-SECRET");
    expect(seen).not.toContain(p.secret);
    expect(seen).toContain("NO-OUTSIDE");
    expect(seen).toContain("NO-ETC");
    expect(seen).toContain("YES-INSIDE");
    expect(seen).toContain("YES-TMP");
    expect(existsSync(p.outside)).toBe(false);
    expect(existsSync(`/etc/sbx-${marker}`)).toBe(false);
    expect(existsSync(`/tmp/t-${marker}`)).toBe(false);
    expect(readFileSync(join(world.workDir, `inside-${marker}.txt`), "utf8")).toBe("inside\n");
  }, 90_000);
}

test("a session run with --sandbox is sandboxed again when resumed without it (the run record remembers)", async () => {
  if (skip) return console.warn(skip);
  const marker = `mresume${Date.now()}`;
  const first = await cli(world, ["run", "default", probe(`${marker}a`, "echo first"), "--sandbox", "--json"], {
    binary: true,
  });
  const [t1] = summaryOf(first.json);
  expect(t1.status, taskWhy(t1, first)).toBe("completed");
  const p = secretProbe(`${marker}b`);
  const again = await cli(world, ["run", "default", p.task, "--session", t1.sessionId, "--json"], { binary: true });
  expect(summaryOf(again.json)[0].status, taskWhy(summaryOf(again.json)[0], again)).toBe("completed");
  const seen = requestsWith(`${marker}b`).map(transcript).join("\n");
  expect(seen).toContain("NO-SECRET");
  expect(seen).not.toContain(p.secret);
  expect(existsSync(p.outside)).toBe(false);
}, 120_000);

test("without the sandbox the same child reads the secret and writes outside (the probe can fail)", async () => {
  if (skip) return console.warn(skip);
  const marker = `mplain${Date.now()}`;
  const p = secretProbe(marker);
  const r = await cli(world, ["run", "default", p.task, "--json"], { binary: true });
  expect(summaryOf(r.json)[0].status, taskWhy(summaryOf(r.json)[0])).toBe("completed");
  expect(requestsWith(marker).map(transcript).join("\n")).toContain(p.secret);
  expect(existsSync(p.outside)).toBe(true);
}, 90_000);

test("sandbox + isolation worktree: the child writes in its worktree, the change lands on its branch", async () => {
  if (skip) return console.warn(skip);
  const repo = makeRepo(world.root, join(world.root, `repo-${Date.now()}`));
  const marker = `miso${Date.now()}`;
  const task = probe(marker, `echo sandboxed > made.txt && git status --short && cat "$HOME/.netrc" || echo NO-SECRET`);
  writeFileSync(join(world.root, ".netrc"), `password iso-${marker}\n`);
  const r = await cli(world, ["run", "default", task, "--sandbox", "--isolation", "worktree", "--json"], {
    binary: true,
    cwd: repo,
  });
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t, r)).toBe("completed");
  expect(t.isolation.branch).toBeTruthy();
  expect(gitIn(world.root, repo, "show", `${t.isolation.branch}:made.txt`)).toBe("sandboxed\n");
  expect(existsSync(join(repo, "made.txt"))).toBe(false);
  const seen = requestsWith(marker).map(transcript).join("\n");
  expect(seen).toContain("made.txt");
  expect(seen).not.toContain(`iso-${marker}`);
}, 90_000);

test("Ctrl-C on a sandboxed run stops the child with everything it started (no process left)", async () => {
  if (skip) return console.warn(skip);
  // A duration no other process uses: the sleep itself is found by it (the owner's argv holds the task text too).
  const marker = `sleep 3${String(Date.now()).slice(-5)}`;
  const task = `hang ${script([{ tool: "bash", args: { command: `${marker}; echo after` } }])}`;
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), "run", "default", task, "--sandbox", "--json"],
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const started = Date.now();
  const sleeping = () =>
    spawnSync("pgrep", ["-f", `^${marker}`])
      .stdout.toString()
      .trim();
  while (!sleeping() && Date.now() - started < 30_000) await Bun.sleep(100);
  expect(sleeping()).not.toBe("");
  proc.kill("SIGINT");
  expect(await proc.exited).toBe(130);
  const left = spawnSync("pgrep", ["-f", marker], { encoding: "utf8" }).stdout.trim();
  expect(left).toBe("");
}, 90_000);

test("an owner killed with SIGKILL takes its sandboxed child and the child's commands with it (--die-with-parent)", async () => {
  if (skip) return console.warn(skip);
  const marker = `sleep 2${String(Date.now()).slice(-5)}`;
  const task = `hang ${script([{ tool: "bash", args: { command: `${marker}; echo after` } }])}`;
  const proc = Bun.spawn({
    cmd: [join(REPO, "dist", "subagents"), "run", "default", task, "--sandbox", "--json"],
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const sleeping = () =>
    spawnSync("pgrep", ["-f", `^${marker}`])
      .stdout.toString()
      .trim();
  const started = Date.now();
  while (!sleeping() && Date.now() - started < 30_000) await Bun.sleep(100);
  expect(sleeping()).not.toBe("");
  proc.kill("SIGKILL");
  await proc.exited;
  const t1 = Date.now();
  while (sleeping() && Date.now() - t1 < 5000) await Bun.sleep(50);
  expect(sleeping()).toBe("");
}, 90_000);

test("the control pipe crosses the sandbox: a budget's wrap-up steer reaches the child", async () => {
  if (skip) return console.warn(skip);
  const marker = `msteer${Date.now()}`;
  const busy = Array.from({ length: 8 }, (_, i) => ({ tool: "bash", args: { command: `echo ${marker} ${i}` } }));
  const r = await cli(world, ["delegate", "--json", "--sandbox", "--max-turns", "2", `${marker} ${script(busy)}`], {
    binary: true,
  });
  expect(summaryOf(r.json)[0].errorCode).toBe("BUDGET_EXCEEDED");
  expect(requestsWith(marker).map(transcript).join("\n")).toContain("Stop working now");
}, 90_000);

test("a missing bubblewrap is a clear error naming the package, and nothing runs", async () => {
  if (skip) return console.warn(skip);
  const bin = join(world.root, "nobwrap-bin");
  mkdirSync(bin, { recursive: true });
  const r = await cli(world, ["run", "default", "hello", "--sandbox", "--json"], { binary: true, env: { PATH: bin } });
  const [t] = summaryOf(r.json);
  expect(t.status).toBe("error");
  expect(t.error).toContain("bubblewrap");
  expect(t.errorCode ?? t.code).toBe("RUNNER_FAILED");
  const doctor = await cli(world, ["doctor", "--json"], { binary: true, env: { PATH: bin } });
  const check = JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === "sandbox");
  expect(check.status).toBe("warn");
  expect(check.fix).toContain("apt-get install bubblewrap");
  // Installed but refused by the system (Ubuntu's AppArmor rule for user namespaces): doctor says so.
  const { chmodSync } = await import("node:fs");
  writeFileSync(
    join(bin, "bwrap"),
    "#!/bin/sh\n[ \"$1\" = --version ] && { echo bubblewrap 9.9; exit 0; }\necho 'bwrap: setting up uid map: Permission denied' >&2; exit 1\n",
  );
  chmodSync(join(bin, "bwrap"), 0o755);
  const refused = await cli(world, ["doctor", "--json"], { binary: true, env: { PATH: `${bin}:/usr/bin:/bin` } });
  const line = JSON.parse(refused.stdout).checks.find((c: { name: string }) => c.name === "sandbox");
  expect(line.status).toBe("warn");
  expect(line.detail).toContain("cannot start a sandbox here: bwrap: setting up uid map: Permission denied");
  const found = await cli(world, ["doctor", "--json"], { binary: true });
  expect(JSON.parse(found.stdout).checks.find((c: { name: string }) => c.name === "sandbox").detail).toContain(
    "bubblewrap 0.",
  );
}, 60_000);

test("in pi (Node parent, our extension): a delegate_to_subagents task with sandbox: true is confined, its neighbour is not", async () => {
  if (skip) return console.warn(skip);
  const marker = `mpi${Date.now()}`;
  writeFileSync(join(world.root, ".netrc"), `password pi-${marker}\n`);
  const child = (who: string) =>
    `${who} ${marker} ${script([{ tool: "bash", args: { command: `cat "$HOME/.netrc" || echo NO-SECRET-${who}` } }, { finalize: { status: "SUCCESS", result: `${who} done` } }])}`;
  const r = await runParentPi(world, {
    runtime: "node",
    steps: [
      {
        tool: "delegate_to_subagents",
        args: {
          tasks: [
            { name: "boxed", prompt: child("boxed"), sandbox: true },
            { name: "open", prompt: child("open") },
          ],
        },
      },
      { text: "parent done" },
    ],
  });
  expect(r.code, r.stderr).toBe(0);
  expect(r.results[0].isError).toBe(false);
  // Each child's own requests (a sibling's task is named in the team note after the task).
  const boxed = requestsOfTask(world, `boxed ${marker}`).map(transcript).join("\n");
  const open = requestsOfTask(world, `open ${marker}`).map(transcript).join("\n");
  expect(boxed).toContain("NO-SECRET-boxed");
  expect(boxed).not.toContain(`pi-${marker}`);
  expect(open).toContain(`pi-${marker}`);
}, 120_000);

test("steer reaches a sandboxed child (the control pipe is inherited through bwrap)", async () => {
  if (skip) return console.warn(skip);
  const marker = `sleep 2.${String(Date.now()).slice(-4)}`;
  const run = cli(
    world,
    [
      "run",
      "default",
      `steer me ${script([{ tool: "bash", args: { command: `${marker}; echo slept` } }, { finalize: { status: "SUCCESS", result: "not steered" } }])}`,
      "--sandbox",
      "--json",
    ],
    { binary: true },
  );
  expect(await untilSleeping(marker)).toBe(true);
  const id = sessionOfPrompt(world.env.SUBAGENTS_DB, marker)!;
  const s = await cli(
    world,
    ["steer", id, `Change of plan ${script([{ finalize: { status: "SUCCESS", result: "steered in the box" } }])}`],
    { binary: true },
  );
  expect(s.stderr).toContain(`delivered to ${id}`);
  expect(summaryOf((await run).json)[0].output).toBe("steered in the box");
}, 120_000);

test("--background --sandbox: the detached supervisor runs the task sandboxed too", async () => {
  if (skip) return console.warn(skip);
  const marker = `mbg${Date.now()}`;
  const p = secretProbe(marker);
  const r = await cli(world, ["delegate", "--background", "--sandbox", "--json", p.task], { binary: true });
  const id = r.json.find((e) => e.type === "task_background")!.sessionId as string;
  const w = await cli(world, ["wait", id, "--json"], { binary: true });
  expect(w.code, w.stderr).toBe(0);
  const seen = requestsWith(marker).map(transcript).join("\n");
  expect(seen).toContain("NO-SECRET");
  expect(seen).not.toContain(p.secret);
  expect(existsSync(p.outside)).toBe(false);
}, 120_000);

test("subagents.sandboxReadable shows more of the home read-only (a toolchain), and nothing else of it", async () => {
  if (skip) return console.warn(skip);
  const marker = `mtool${Date.now()}`;
  mkdirSync(join(world.root, ".toolchain", "bin"), { recursive: true });
  writeFileSync(join(world.root, ".toolchain", "bin", "tool"), `#!/bin/sh\necho tool-ran-${marker}\n`, { mode: 0o755 });
  writeFileSync(join(world.root, ".netrc"), `password tc-${marker}\n`);
  world.setSubagentSettings({ sandboxReadable: ["~/.toolchain"] });
  try {
    const command = `"$HOME/.toolchain/bin/tool"; echo x > "$HOME/.toolchain/w" || echo NO-WRITE; cat "$HOME/.netrc" || echo NO-SECRET`;
    const r = await cli(world, ["run", "default", probe(marker, command), "--sandbox", "--json"], { binary: true });
    expect(summaryOf(r.json)[0].status, taskWhy(summaryOf(r.json)[0], r)).toBe("completed");
    const seen = requestsWith(marker).map(transcript).join("\n");
    expect(seen).toContain(`tool-ran-${marker}`);
    expect(seen).toContain("NO-WRITE");
    expect(seen).toContain("NO-SECRET");
    expect(seen).not.toContain(`tc-${marker}`);
  } finally {
    world.setSubagentSettings({});
  }
}, 90_000);
