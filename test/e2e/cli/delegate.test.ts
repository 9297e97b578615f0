// `subagents delegate` end to end: real pi children against the scripted model server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { BUN, cli, jsonLines, piWorld, REPO, type PiWorld, summaryOf, until, taskWhy } from "../../support/pi-env.ts";
import { hasTmux } from "../../support/tmux.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

const pidsMatching = (needle: string) => {
  const out = spawnSync("pgrep", ["-f", `^${needle}`], { encoding: "utf8" });
  return out.stdout
    .split("\n")
    .filter(Boolean)
    .filter((p) => Number(p) !== process.pid);
};

test("8 tasks at concurrency 3: every task gets its own output, never more than 3 at once", async () => {
  const prompts = Array.from(
    { length: 8 },
    (_, i) =>
      `task number ${i} ${script([{ delayMs: 150 + (i % 3) * 100, finalize: { status: "SUCCESS", result: `output of ${i}` } }])}`,
  );
  const r = await cli(world, ["delegate", ...prompts, "--concurrency", "3", "--json"]);
  expect(r.code).toBe(0);
  const tasks = summaryOf(r.json);
  expect(tasks.map((t) => t.output)).toEqual(prompts.map((_, i) => `output of ${i}`));
  expect(tasks.map((t) => t.name)).toEqual(prompts.map((_, i) => `task-${i + 1}`));
  expect(new Set(tasks.map((t) => t.sessionId)).size).toBe(8);
  let running = 0;
  let peak = 0;
  for (const e of r.json) {
    if (e.type === "task_start") peak = Math.max(peak, ++running);
    if (e.type === "task_end") running--;
  }
  expect(peak).toBe(3);
}, 90_000);

test("mixed results: success, provider failure and unknown profile in one call (--tasks JSON)", async () => {
  const file = join(world.root, "mixed.json");
  writeFileSync(
    file,
    JSON.stringify({
      tasks: [
        { name: "good", prompt: `fine ${script([{ finalize: { status: "SUCCESS", result: "good result" } }])}` },
        { name: "broken", prompt: `fails ${script([{ status: 400, message: "scripted refusal 5521" }])}` },
        { name: "ghost", prompt: "never runs", profile: "no-such-profile" },
      ],
    }),
  );
  const r = await cli(world, ["delegate", "--tasks", file, "--json"]);
  expect(r.code).toBe(1);
  const [good, broken, ghost] = summaryOf(r.json);
  expect(good.status, taskWhy(good)).toBe("completed");
  expect(good.output).toBe("good result");
  expect(broken.status).toBe("error");
  expect(broken.error).toContain("scripted refusal 5521");
  expect(ghost.status).toBe("error");
  expect(ghost.error).toBe('Unknown profile: "no-such-profile". Available profiles: planner, reviewer, scout, worker');
  // The unknown-profile task still has a session record, like every other task (failed: exit 1).
  const out = await cli(world, ["session", ghost.sessionId]);
  expect(out.code).toBe(1);
  expect(out.stdout).toContain("Unknown profile");
}, 60_000);

test("files in every spec form are prepended as === path === blocks", async () => {
  const dir = join(world.root, "files-project");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "lines.txt"), `${Array.from({ length: 20 }, (_, i) => `line-${i + 1}`).join("\n")}\n`);
  writeFileSync(join(dir, "big.bin"), Buffer.alloc(1024 * 1024 + 1, 97));
  const marker = `files-${Date.now()}`;
  const file = join(world.root, "files.json");
  writeFileSync(
    file,
    JSON.stringify({
      tasks: [
        {
          name: "reader",
          prompt: marker,
          cwd: dir,
          files: [
            "lines.txt",
            { path: "lines.txt", start: 3, end: 4 },
            { path: "lines.txt", head: 2 },
            { path: "lines.txt", tail: 1 },
            "missing.txt",
            "big.bin",
          ],
        },
      ],
    }),
  );
  const r = await cli(world, ["delegate", "--tasks", file, "--json"]);
  expect(summaryOf(r.json)[0].status, taskWhy(summaryOf(r.json)[0])).toBe("completed");
  const req = world.server.requests.find((q) => JSON.stringify(q.messages).includes(marker))!;
  const user = (req.messages ?? []).find((m) => m.role === "user")!;
  const text =
    typeof user.content === "string" ? user.content : (user.content as { text: string }[]).map((p) => p.text).join("");
  expect(text).toContain("=== lines.txt ===\nline-1\nline-2\nline-3");
  expect(text).toContain("=== lines.txt ===\nline-3\nline-4\n\n");
  expect(text).toContain("=== lines.txt ===\nline-1\nline-2\n\n");
  expect(text).toContain("=== lines.txt ===\nline-20\n\n");
  expect(text).toContain("[file not found: missing.txt]");
  expect(text).toContain("[file too large: big.bin (1024KB, limit 1024KB)]");
  expect(text.indexOf("=== lines.txt")).toBeLessThan(text.indexOf(marker));
}, 60_000);

test("--resume continues a session; an unknown id fails before anything runs", async () => {
  const first = `resume-me-${Date.now()}`;
  const r1 = await cli(world, ["delegate", first, "--json"]);
  const [t1] = summaryOf(r1.json);
  const r2 = await cli(world, ["delegate", "and now the follow-up", "--resume", t1.sessionId, "--json"]);
  const [t2] = summaryOf(r2.json);
  expect(t2.sessionId).toBe(t1.sessionId);
  expect(t2.status, taskWhy(t2)).toBe("completed");
  const last = JSON.stringify(world.server.requests.at(-1)!.messages);
  expect(last).toContain(first);
  const bad = await cli(world, ["delegate", "x", "--resume", "ffffffffffffffff"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain(
    'Cannot resume: session "ffffffffffffffff" not found. The session may have expired or the ID is incorrect.',
  );
}, 60_000);

test("a task refused before it starts names its profile file with the home masked", async () => {
  const agents = join(world.agentDir, "agents");
  mkdirSync(agents, { recursive: true });
  writeFileSync(
    join(agents, "warped.md"),
    "---\nname: warped\ndescription: broken on purpose\nthinking: warp\n---\nx\n",
  );
  try {
    const r = await cli(world, ["delegate", "--tasks", "-", "--json"], {
      stdin: JSON.stringify({ tasks: [{ name: "w", prompt: "x", profile: "warped" }] }),
    });
    const [t] = r.json.at(-1)!.tasks;
    expect(t.error).toContain('Profile "warped" (~/agent/agents/warped.md) cannot be used:');
    expect(r.stdout).not.toContain(world.root);
  } finally {
    rmSync(join(agents, "warped.md"), { force: true });
  }
}, 60_000);

test("--concurrency outside 1–16 is a usage error; the same refusal exits 2 in delegate and in run", async () => {
  for (const bad of ["0", "17", "2.5"]) {
    const r = await cli(world, ["delegate", "x", "--concurrency", bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--concurrency must be (a positive number|a whole number from 1 to 16)/);
  }
  const resumeDelegate = await cli(world, ["delegate", "x", "--resume", "0123456789abcdef"]);
  const resumeRun = await cli(world, ["run", "default", "x", "--session", "0123456789abcdef"]);
  expect([resumeDelegate.code, resumeRun.code]).toEqual([2, 2]);
  expect(resumeRun.stderr).toContain('Cannot resume: session "0123456789abcdef" not found.');
  const profileDelegate = await cli(world, ["delegate", "x", "--profile", "ghost"]);
  const profileRun = await cli(world, ["run", "ghost", "x"]);
  expect([profileDelegate.code, profileRun.code]).toEqual([2, 2]);
  expect(profileDelegate.stderr).toContain('Unknown profile: "ghost". Available profiles:');
}, 60_000);

test("usage errors: 17 tasks, a missing cwd, a relative cwd in --tasks", async () => {
  const many = await cli(world, ["delegate", ...Array.from({ length: 17 }, (_, i) => `t${i}`)]);
  expect(many.code).toBe(2);
  expect(many.stderr).toContain("at most 16 tasks");
  const noDir = await cli(world, ["delegate", "x", "--cwd", join(world.root, "nope")]);
  expect(noDir.code).toBe(2);
  expect(noDir.stderr).toContain("does not exist");
  const rel = join(world.root, "rel.json");
  writeFileSync(rel, JSON.stringify({ tasks: [{ name: "a", prompt: "p", cwd: "relative/dir" }] }));
  const relR = await cli(world, ["delegate", "--tasks", rel]);
  expect(relR.code).toBe(2);
  expect(relR.stderr).toContain("tasks[0].cwd: cwd must be an absolute path");
});

test("SIGINT during a long bash call stops every child and grandchild, records the status, exits 130", async () => {
  const tag = `${Date.now() % 100000}.${Math.floor(Math.random() * 1000)}`;
  // A background grandchild and a foreground command, both unique to this test.
  const prompt = `wait ${script([{ tool: "bash", args: { command: `sleep 4${tag} & sleep 3${tag}; echo done` } }])}`;
  const proc = Bun.spawn({
    cmd: [BUN, join(REPO, "src/cli/main.ts"), "delegate", prompt, "--json"],
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = new Response(proc.stdout).text();
  // Wait until the bash command is really running.
  await until("the child's command running", () => pidsMatching(`sleep 3${tag}`).length > 0);
  expect(pidsMatching(`sleep 3${tag}`).length).toBeGreaterThan(0);
  proc.kill("SIGINT");
  const code = await proc.exited;
  expect(code).toBe(130);
  const [t] = summaryOf(jsonLines(await stdout));
  expect(t.status).toBe("error");
  expect(t.errorCode).toBe("SUBAGENT_CANCELLED");
  await Bun.sleep(200);
  expect(pidsMatching(`sleep 3${tag}`)).toEqual([]);
  expect(pidsMatching(`sleep 4${tag}`)).toEqual([]);
  const s = await cli(world, ["sessions", "--json"]);
  expect(s.json.find((row) => row.id === t.sessionId)?.status).toBe("error");
}, 60_000);

test("a closed pipe is no stop: `delegate … | head -1` says so once on stderr, the tasks finish and are recorded; SIGHUP stops them in order", async () => {
  const tag = `${Date.now() % 100000}`;
  const slow = (n: string) =>
    `pipe ${n} ${tag} ${script([{ tool: "bash", args: { command: "sleep 1" } }, { text: `done ${n}` }])}`;
  const pipeline = async (redirect: string) => {
    const sh = Bun.spawn({
      cmd: [
        "bash",
        "-c",
        `"$@" ${redirect} | head -c 1; echo " status=\${PIPESTATUS[0]}"`,
        "_",
        join(REPO, "dist", "subagents"),
        "delegate",
        slow("a"),
        slow("b"),
        "--json",
      ],
      cwd: world.workDir,
      env: world.env,
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err] = await Promise.all([new Response(sh.stdout).text(), new Response(sh.stderr).text()]);
    await sh.exited;
    return { out, err };
  };
  // stdout read for one byte; then stdout and stderr both into the pipe that closes.
  for (const redirect of ["", "2>&1"]) {
    const before = (await cli(world, ["sessions", "--json"])).json.length;
    const { out, err } = await pipeline(redirect);
    expect(out, err).toEndWith(" status=0\n");
    expect(err).not.toContain("EPIPE");
    expect(err).not.toContain("at ");
    if (!redirect)
      expect(err).toContain(
        "subagents: stdout closed (its reader went away): the call's 2 unfinished task(s) go on to their end and are recorded",
      );
    const listed = (await cli(world, ["sessions", "--json"])).json;
    expect(listed.length - before).toBe(2);
    expect(listed.slice(0, 2).map((r) => r.status)).toEqual(["completed", "completed"]);
  }
  // A terminal that hangs up: the children are stopped with the kill protocol and recorded why, exit 129.
  const proc = Bun.spawn({
    cmd: [
      join(REPO, "dist", "subagents"),
      "delegate",
      `hup ${script([{ tool: "bash", args: { command: `sleep 5${tag}` } }])}`,
      "--json",
    ],
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = new Response(proc.stdout).text();
  await until("the child's command running", () => pidsMatching(`sleep 5${tag}`).length > 0);
  proc.kill("SIGHUP");
  expect(await proc.exited).toBe(129);
  const [t] = summaryOf(jsonLines(await stdout));
  expect([t.errorCode, t.error]).toEqual(["SUBAGENT_CANCELLED", "Cancelled: the terminal hung up (SIGHUP)"]);
  expect(pidsMatching(`sleep 5${tag}`)).toEqual([]);
}, 90_000);

test.skipIf(!hasTmux)(
  "on a terminal: live windows, then the cursor is restored",
  async () => {
    const session = `subagents-tty-${process.pid}`;
    const envArgs = Object.entries({ ...world.env, TERM: "xterm-256color" }).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    const slow = (i: number) =>
      `slow task ${i} ${script([{ tool: "bash", args: { command: "sleep 1.5" } }, { finalize: { status: "SUCCESS", result: `tty result ${i}` } }])}`;
    const cmd = [BUN, join(REPO, "src/cli/main.ts"), "delegate", slow(1), slow(2)]
      .map((a) => `'${a.replace(/'/g, "'\\''")}'`)
      .join(" ");
    execFileSync("tmux", [
      "new-session",
      "-d",
      "-s",
      session,
      "-x",
      "100",
      "-y",
      "30",
      ...envArgs,
      `cd '${world.workDir}' && ${cmd}; sleep 20`,
    ]);
    try {
      let screen = "";
      for (let i = 0; i < 60 && !screen.includes("bash → sleep 1.5"); i++) {
        await Bun.sleep(100);
        screen = execFileSync("tmux", ["capture-pane", "-p", "-t", session], { encoding: "utf8" });
      }
      expect(screen).toContain("Sub-agents: 2 running");
      expect(screen).toMatch(/● task-1 • .*• \d+s\/600s/);
      expect(
        execFileSync("tmux", ["display", "-p", "-t", session, "#{cursor_flag}"], { encoding: "utf8" }).trim(),
      ).toBe("0");
      await until("both results on the screen", () => {
        screen = execFileSync("tmux", ["capture-pane", "-p", "-t", session], { encoding: "utf8" });
        return screen.includes("tty result 2");
      }).catch(() => {}); // the expects below show the screen
      expect(screen).toContain("Sub-agents: 0 running, 2 done");
      expect(screen).toMatch(/^✓ task-1 • /m);
      expect(screen).toContain("tty result 1");
      expect(
        execFileSync("tmux", ["display", "-p", "-t", session, "#{cursor_flag}"], { encoding: "utf8" }).trim(),
      ).toBe("1");
    } finally {
      spawnSync("tmux", ["kill-session", "-t", session]);
    }
  },
  60_000,
);

test("skills: suggestedSkills reach pi as --skill, loadSkills are inlined; unknown skills fail one task; conflicts fail the call", async () => {
  const skillDir = join(world.agentDir, "skills", "release-notes");
  mkdirSync(skillDir, { recursive: true });
  writeFileSync(
    join(skillDir, "SKILL.md"),
    "---\nname: release-notes\ndescription: Writes release notes from git history\n---\nUse git log to collect changes. MARKER-SUGGESTED\n",
  );
  writeFileSync(
    join(world.agentDir, "skills", "house-style.md"),
    "---\nname: house-style\ndescription: Our writing style\n---\nAlways write in short sentences. MARKER-LOADED\n",
  );
  const profiles = join(world.agentDir, "agents");
  mkdirSync(profiles, { recursive: true });
  writeFileSync(
    join(profiles, "writer.md"),
    "---\nname: writer\ndescription: Writes\nsuggestedSkills: release-notes\nloadSkills: house-style\n---\nYou write.\n",
  );
  writeFileSync(
    join(profiles, "typo.md"),
    "---\nname: typo\ndescription: Writes with a typo\nloadSkills: no-such-skill\n---\nYou write.\n",
  );
  writeFileSync(
    join(profiles, "torn.md"),
    "---\nname: torn\ndescription: Writes, torn\nnoSkills: true\nsuggestedSkills: release-notes\n---\nYou write.\n",
  );
  const marker = `skills-${Date.now()}`;
  const file = join(world.root, "skills.json");
  writeFileSync(
    file,
    JSON.stringify({
      tasks: [
        { name: "w", prompt: marker, profile: "writer" },
        { name: "t", prompt: "x", profile: "typo" },
      ],
    }),
  );
  const r = await cli(world, ["delegate", "--tasks", file, "--json"]);
  const [w, t] = summaryOf(r.json);
  expect(w.status, taskWhy(w)).toBe("completed");
  expect(t.status).toBe("error");
  expect(t.error).toBe('Unknown skills: "no-such-skill". Available skills: house-style, release-notes');
  const req = world.server.requests.find((q) => JSON.stringify(q.messages).includes(marker))!;
  const system = JSON.stringify(req.messages![0]);
  expect(system).toContain("MARKER-LOADED");
  expect(system).toContain("release-notes");
  const torn = await cli(world, ["delegate", "x", "--profile", "torn"]);
  expect(torn.code).toBe(2);
  expect(torn.stderr).toContain(
    'Profile "torn" has both "suggestedSkills" and "noSkills" set. These are mutually exclusive — --no-skills would override --skill flags.',
  );
}, 60_000);

test("piped (not a terminal): start and end lines, failed tasks included, outputs under rules, a totals line last", async () => {
  const good = `fine ${script([{ finalize: { status: "SUCCESS", result: "piped good result" } }])}`;
  const bad = `fails ${script([{ status: 400, message: "scripted refusal 7781" }])}`;
  const r = await cli(world, ["delegate", "--name", "good", "--name", "bad", good, bad]);
  expect(r.code).toBe(1);
  const lines = r.stdout.trimEnd().split("\n");
  expect(lines.filter((l) => /^● (good|bad) • default • [0-9a-f]{16}$/.test(l)).length).toBe(2);
  expect(
    lines.some((l) =>
      /^✓ good • default \(.+\) • \d+ tools? • \d+\.\ds • \d+ turns? • ↑\S+ ↓\S+ • [0-9a-f]{16}$/.test(l),
    ),
  ).toBe(true);
  const badAt = lines.findIndex((l) => /^✗ bad • /.test(l));
  expect(lines[badAt + 1]).toContain("scripted refusal 7781");
  const rule = lines.findIndex((l) => l.startsWith("── good ("));
  expect(lines[rule + 1]).toBe("piped good result");
  expect(lines.at(-1)).toMatch(/^1 completed, 1 failed · \d+\.\ds$/);
  expect(r.stdout).not.toContain("\x1b[");
}, 60_000);

test("run speaks the same words: a start line, tool lines, and delegate's end line on stderr; the result alone on stdout", async () => {
  const r = await cli(world, [
    "run",
    "scout",
    `look ${script([{ tool: "ls", args: { path: "." } }, { finalize: { status: "SUCCESS", result: "run result" } }])}`,
  ]);
  expect(r.code).toBe(0);
  expect(r.stdout).toBe("run result\n");
  const err = r.stderr.trimEnd().split("\n");
  expect(err[0]).toMatch(/^● scout • scout • [0-9a-f]{16}$/);
  expect(err).toContain("  ls → .");
  expect(err.at(-1)).toMatch(/^✓ scout • scout \(.+\) • 2 tools • \d+\.\ds • \d+ turns? • ↑\S+ ↓\S+ • [0-9a-f]{16}$/);
}, 60_000);

test("piped, SIGINT twice: the second kills every process at once (a grandchild in its own session too), exit 130", async () => {
  const tag = `${Date.now() % 100000}${Math.floor(Math.random() * 100)}`;
  // A pi that ignores SIGTERM (so the first stop has to wait out its grace period) with a grandchild in a
  // session of its own, like pi's bash tool.
  const fake = join(world.root, `stubborn-pi-${tag}.sh`);
  writeFileSync(fake, `#!/bin/sh\ntrap '' TERM\nsetsid sleep 5${tag} &\nwhile true; do sleep 1; done\n`);
  chmodSync(fake, 0o755);
  const proc = Bun.spawn({
    cmd: [BUN, join(REPO, "src/cli/main.ts"), "run", "default", "wait"],
    cwd: world.workDir,
    env: { ...world.env, SUBAGENTS_PI: fake },
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = new Response(proc.stderr).text();
  await until("the child's command running", () => pidsMatching(`sleep 5${tag}`).length > 0);
  expect(pidsMatching(`sleep 5${tag}`).length).toBeGreaterThan(0);
  proc.kill("SIGINT");
  await Bun.sleep(300);
  proc.kill("SIGINT");
  const started = Date.now();
  expect(await proc.exited).toBe(130);
  expect(Date.now() - started).toBeLessThan(4_000); // well before the 5 s grace the first Ctrl-C waits out
  await Bun.sleep(100);
  expect(pidsMatching(`sleep 5${tag}`)).toEqual([]);
  const err = await stderr;
  expect(err).toContain("stopping… press Ctrl-C again to force");
  expect(err).toContain("stopped: every sub-agent process was killed");
}, 60_000);
