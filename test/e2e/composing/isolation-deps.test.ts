// Isolated tasks on real projects made here: an npm project whose test script requires a package in its ignored
// node_modules, a Python project with a venv (a module in its site-packages, the project installed editable), an
// ignored .env named in .worktreeinclude. Real pi children (the executable's) against the scripted model; the
// gates are the projects' own commands. The README's CLI example runs as written.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import {
  cli,
  jsonLines,
  piWorld,
  type PiWorld,
  REPO,
  requestsOfTask,
  summaryOf,
  taskWhy,
  until,
  userTexts,
} from "../../support/pi-env.ts";
import { gitIn, subagentBranches, worktreeList } from "../../support/git-repo.ts";
import {
  ENV_SECRET as SECRET,
  LEFTPAD,
  npmProject as makeNpmProject,
  worktreesLeft,
  writeFile as write,
} from "../../support/projects.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
  // npm must not look for its own updates (tests reach 127.0.0.1 only).
  world.env.NPM_CONFIG_UPDATE_NOTIFIER = "false";
});
afterAll(() => world?.close());

const npmProject = (dir: string, test?: string) => makeNpmProject(world.root, dir, test);
const ourWorktrees = () => worktreesLeft(world.root);
const treeOf = (repo: string, ref: string) =>
  gitIn(world.root, repo, "ls-tree", "-r", "--name-only", ref).split("\n").filter(Boolean);

test("the README's example runs as written on an npm project: each isolated task's `npm test` finds node_modules", async () => {
  const repo = npmProject(join(world.root, "readme"));
  const readme = [
    "delegate",
    "--isolation",
    "worktree",
    "--gate",
    "npm test",
    "--name",
    "api",
    "add input validation to src/api.ts",
    "--name",
    "docs",
    "document the API in README.md",
    "--name",
    "tests",
    "add tests for the error paths of src/api.ts",
  ];
  const r = await cli(world, readme, { binary: true, cwd: repo });
  const out = r.stdout + r.stderr;
  expect(r.code, out.slice(-3000)).toBe(0);
  for (const name of ["api", "docs", "tests"]) expect(out).toMatch(new RegExp(`✓ ${name} • `));
  expect(out).not.toContain("MODULE_NOT_FOUND");
  expect(worktreeList(world.root, repo)).toHaveLength(1);
  expect(ourWorktrees()).toEqual([]);
  // doctor names the way this machine uses, and the folders of this repository.
  const doctor = await cli(world, ["doctor", "--json", "--cwd", repo], { binary: true });
  const line = doctor.json[0].checks.find((c: { name: string }) => c.name === "worktrees");
  expect(line.detail).toContain("in this repository, ignored (seen by tasks, on no branch): .env, node_modules");
  expect(line.status === "ok" ? line.detail : "copy").toMatch(/overlay in a (mount|user) namespace|clones|copy/);
  // Without the view (the worktree holds only what git tracks), the same gate cannot find the package: the
  // failure this example had before.
  world.setSubagentSettings({ worktreeDeps: "off" });
  try {
    const bare = await cli(world, [...readme.slice(0, 8), "--gate-retries", "0", "--json"], {
      binary: true,
      cwd: repo,
    });
    const [t] = summaryOf(bare.json);
    expect(t.errorCode, taskWhy(t, bare)).toBe("GATE_FAILED");
    expect(t.error).toContain("MODULE_NOT_FOUND");
  } finally {
    world.setSubagentSettings({});
  }
}, 180_000);

test("a dependency the child patches and installs stays in its task; .env is there, masked, never on the branch; the next task (after, {{name}}) sees the user's dependency; apply takes only the child's work", async () => {
  const repo = npmProject(join(world.root, "patch"));
  const patch = [
    // What the child shows of .env is masked wherever we show it, even a value printed alone.
    "cut -d= -f2 .env",
    "node -e \"require('fs').appendFileSync('node_modules/leftpad/index.js', 'module.exports.patched = true;\\n')\"",
    "mkdir -p node_modules/newdep && echo 'module.exports = 42;' > node_modules/newdep/index.js",
    "node -e \"console.log('patched=' + require('leftpad').patched + ' newdep=' + require('newdep'))\"",
  ].join(" && ");
  const tasks = join(world.root, "patch-tasks.json");
  writeFileSync(
    tasks,
    JSON.stringify({
      tasks: [
        {
          name: "patcher",
          isolation: "worktree",
          gate: "npm test",
          prompt: `PATCHER ${script([
            { tool: "bash", args: { command: patch } },
            {
              tool: "write",
              args: {
                path: "src/api.ts",
                content: "export function api(input: string) { if (!input) throw new Error('empty'); return input; }\n",
              },
            },
            { finalize: { status: "SUCCESS", result: "validation added, leftpad patched" } },
          ])}`,
        },
        {
          name: "checker",
          after: ["patcher"],
          isolation: "worktree",
          // Passes only where leftpad is the user's own: the patcher's change did not leak into its sibling.
          gate: "node -e \"process.exit(require('leftpad').patched ? 1 : 0)\" && test ! -e node_modules/newdep && npm test",
          prompt: "CHECKER review what the patcher said: {{patcher}}",
        },
      ],
    }),
  );
  const r = await cli(world, ["delegate", "--tasks", tasks, "--json"], { binary: true, cwd: repo });
  const [p, c] = summaryOf(r.json);
  expect(p.status, taskWhy(p, r)).toBe("completed");
  expect(c.status, taskWhy(c, r)).toBe("completed");
  expect(p.gate).toEqual({ passed: true, attempts: 1 });
  expect(c.gate).toEqual({ passed: true, attempts: 1 });
  // The child saw its own patch and package.
  const seen = JSON.stringify(requestsOfTask(world, "PATCHER").at(-1)?.messages);
  expect(seen).toContain("patched=true newdep=42");
  expect(
    userTexts(world).some((t) => t.includes("review what the patcher said: validation added, leftpad patched")),
  ).toBe(true);
  // The user's copy is as it was.
  expect(readFileSync(join(repo, "node_modules", "leftpad", "index.js"), "utf8")).toBe(LEFTPAD);
  expect(existsSync(join(repo, "node_modules", "newdep"))).toBe(false);
  // The branch holds the child's edit only: no node_modules, no .env.
  expect(p.isolation.files.map((f: { path: string }) => f.path)).toEqual(["src/api.ts"]);
  expect(treeOf(repo, p.isolation.branch)).toEqual([
    ".gitignore",
    ".worktreeinclude",
    "README.md",
    "package.json",
    "src/api.ts",
    "test.js",
  ]);
  expect(p.isolation.view).toMatchObject({ included: [".env"] });
  expect(["overlay", "reflink", "copy"]).toContain(p.isolation.view.mechanism);
  expect(c.isolation.branch).toBeUndefined();
  // The secret never reaches what we show: the run's output, the stored transcript.
  const session = await cli(world, ["session", p.sessionId], { binary: true });
  for (const shown of [r.stdout, r.stderr, session.stdout]) expect(shown).not.toContain(SECRET);
  expect(session.stdout).toContain("[REDACTED]");
  // Nor the child's own transcript (its pi session file, which a resume and `pi --resume` read).
  const own = readdirSync(join(world.agentDir, "subagent-sessions"), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(`_${p.sessionId}.jsonl`));
  expect(own.length).toBe(1);
  const transcript = readFileSync(join(world.agentDir, "subagent-sessions", own[0]), "utf8");
  expect(transcript).toContain("[REDACTED]");
  expect(transcript).not.toContain(SECRET);
  // apply merges the child's work and nothing else.
  const applied = await cli(world, ["apply", p.sessionId], { binary: true, cwd: repo });
  expect(applied.code, applied.stderr).toBe(0);
  expect(readFileSync(join(repo, "src", "api.ts"), "utf8")).toContain("throw new Error('empty')");
  expect(readFileSync(join(repo, "node_modules", "leftpad", "index.js"), "utf8")).toBe(LEFTPAD);
  expect(readFileSync(join(repo, ".env"), "utf8")).toContain(SECRET);
  expect(gitIn(world.root, repo, "status", "--porcelain")).toBe("");
  expect(ourWorktrees()).toEqual([]);
}, 180_000);

/** A Python project: a venv (no pip: nothing to download) with a helper module in its site-packages and the project
 *  installed editable (a path file naming the project's src/), as `pip install -e .` leaves it. */
function pythonProject(dir: string): { repo: string; site: string } {
  mkdirSync(dir, { recursive: true });
  gitIn(world.root, dir, "init", "-q", "-b", "main");
  write(join(dir, ".gitignore"), ".venv/\n__pycache__/\n");
  write(join(dir, "src", "myproj", "__init__.py"), "VALUE = 'user'\n");
  gitIn(world.root, dir, "add", "-A");
  gitIn(world.root, dir, "-c", "user.email=me@example.com", "-c", "user.name=Me", "commit", "-q", "-m", "first");
  const python = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  const made = spawnSync(python, ["-m", "venv", "--without-pip", join(dir, ".venv")], { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`python3 -m venv failed: ${made.stderr}`);
  const lib = readdirSync(join(dir, ".venv", "lib"))[0];
  const site = join(dir, ".venv", "lib", lib, "site-packages");
  write(join(site, "helper.py"), "OK = True\n");
  write(join(site, "_myproj.pth"), `${join(dir, "src")}\n`);
  return { repo: dir, site };
}

test("a Python venv: the gate runs the task's own code through the venv, the child's change to site-packages stays in its task", async () => {
  const { repo, site } = pythonProject(join(world.root, "py"));
  const child = [
    '. .venv/bin/activate && echo "venv=$VIRTUAL_ENV"',
    "python -c \"import helper; open(helper.__file__, 'a').write('PATCHED = True\\n')\"",
    "python -c \"import helper; print('helper patched:', helper.PATCHED)\"",
  ].join(" && ");
  // Passes only when the editable install points at the task's own src/ (the child changed VALUE there).
  const gate =
    ".venv/bin/python -c \"import myproj, helper; assert myproj.VALUE == 'task', myproj.VALUE; assert helper.OK\"";
  const r = await cli(
    world,
    [
      "run",
      "default",
      `PYTASK ${script([
        { tool: "bash", args: { command: child } },
        { tool: "write", args: { path: "src/myproj/__init__.py", content: "VALUE = 'task'\n" } },
        { text: "done" },
      ])}`,
      "--isolation",
      "worktree",
      "--gate",
      gate,
      "--json",
    ],
    { binary: true, cwd: repo },
  );
  const [t] = summaryOf(r.json);
  expect(t.status, taskWhy(t, r)).toBe("completed");
  expect(t.gate).toEqual({ passed: true, attempts: 1 });
  const seen = JSON.stringify(requestsOfTask(world, "PYTASK").at(-1)?.messages);
  // The layer shows the repository at its own path: the venv is where it always was, written only in the layer.
  expect(seen).toContain(`venv=${repo}/.venv`);
  expect(seen).toContain("helper patched: True");
  expect(readFileSync(join(site, "helper.py"), "utf8")).toBe("OK = True\n");
  expect(readFileSync(join(repo, "src", "myproj", "__init__.py"), "utf8")).toBe("VALUE = 'user'\n");
  expect(t.isolation.files.map((f: { path: string }) => f.path)).toEqual(["src/myproj/__init__.py"]);
  expect(t.isolation.view.mechanism).toBe("overlay");
}, 120_000);

test("setup: runs in the new worktree before the child, inside its view; a failing or hanging one is SETUP_FAILED before any model call; a project's needs consent", async () => {
  const repo = npmProject(
    join(world.root, "setup"),
    "if (require('generated') !== 42) process.exit(1);\nconsole.log('tests passed');\n",
  );
  const gen = "mkdir -p node_modules/generated && echo 'module.exports = 42;' > node_modules/generated/index.js";
  world.setSubagentSettings({ setup: gen });
  try {
    const ok = await cli(
      world,
      ["run", "default", "SETUP-OK", "--isolation", "worktree", "--gate", "npm test", "--json"],
      {
        binary: true,
        cwd: repo,
      },
    );
    const [t] = summaryOf(ok.json);
    expect(t.status, taskWhy(t, ok)).toBe("completed");
    expect(t.gate).toEqual({ passed: true, attempts: 1 });
    // What the setup wrote stayed in the task.
    expect(existsSync(join(repo, "node_modules", "generated"))).toBe(false);

    const requests = world.server.requests.length;
    world.setSubagentSettings({ setup: "echo 'setup broke here' >&2; exit 3" });
    const failed = await cli(world, ["run", "default", "SETUP-FAILS", "--isolation", "worktree", "--json"], {
      binary: true,
      cwd: repo,
    });
    const [f] = summaryOf(failed.json);
    expect(failed.code).toBe(1);
    expect(f.errorCode, taskWhy(f, failed)).toBe("SETUP_FAILED");
    expect(f.error).toContain("Setup `echo 'setup broke here' >&2; exit 3` failed (exit 3) in the task's worktree");
    expect(f.error).toContain("setup broke here");

    world.setSubagentSettings({ setup: "sleep 30", setupTimeout: 1 });
    const hung = await cli(world, ["run", "default", "SETUP-HANGS", "--isolation", "worktree", "--json"], {
      binary: true,
      cwd: repo,
    });
    const [h] = summaryOf(hung.json);
    expect(h.errorCode, taskWhy(h, hung)).toBe("SETUP_FAILED");
    expect(h.error).toContain("did not finish within 1 s (subagents.setupTimeout)");
    expect(world.server.requests.length).toBe(requests);
    expect(spawnSync("pgrep", ["-f", "^sleep 30$"]).status).toBe(1);
    expect(subagentBranches(world.root, repo)).toEqual([]);
    expect(ourWorktrees()).toEqual([]);

    // Ctrl-C while the setup runs: the command waits for the setup's own end (it cleans up on SIGTERM) before it
    // exits, and leaves nothing of it running.
    const cleaned = join(world.root, "setup-cleaned");
    world.setSubagentSettings({ setup: `trap 'sleep 0.3; echo done > ${cleaned}; exit 1' TERM; sleep 31 & wait` });
    const owner = Bun.spawn({
      cmd: [join(REPO, "dist", "subagents"), "run", "default", "SETUP-INT", "--isolation", "worktree", "--json"],
      cwd: repo,
      env: world.env,
      stdout: "pipe",
      stderr: "pipe",
    });
    await until("the setup running", () => spawnSync("pgrep", ["-f", "^sleep 31$"]).status === 0);
    owner.kill("SIGINT");
    expect(await owner.exited).toBe(130);
    expect(existsSync(cleaned)).toBe(true);
    const [i] = summaryOf(jsonLines(await new Response(owner.stdout).text()));
    expect(i.errorCode).toBe("SUBAGENT_CANCELLED");
    expect(spawnSync("pgrep", ["-f", "^sleep 31$"]).status).toBe(1);
    expect(ourWorktrees()).toEqual([]);

    // A project's setup (its .pi/settings.json) is the project's command: not run without consent.
    world.setSubagentSettings({});
    write(join(repo, ".pi", "settings.json"), JSON.stringify({ subagents: { setup: gen } }));
    const asked = await cli(
      world,
      [
        "run",
        "default",
        "SETUP-PROJECT",
        "--isolation",
        "worktree",
        "--gate",
        "npm test",
        "--gate-retries",
        "0",
        "--json",
      ],
      {
        binary: true,
        cwd: repo,
      },
    );
    const [a] = summaryOf(asked.json);
    expect(a.errorCode, taskWhy(a, asked)).toBe("GATE_FAILED");
    expect(a.warnings.join("\n")).toContain(
      "from ~/setup/.pi/settings.json not run: a project's setup command needs consent",
    );
    world.setSubagentSettings({ projectAgents: "allow" });
    const allowed = await cli(
      world,
      ["run", "default", "SETUP-ALLOWED", "--isolation", "worktree", "--gate", "npm test", "--json"],
      {
        binary: true,
        cwd: repo,
      },
    );
    expect(summaryOf(allowed.json)[0].status, taskWhy(summaryOf(allowed.json)[0], allowed)).toBe("completed");
  } finally {
    world.setSubagentSettings({});
  }
}, 180_000);
