// The CLI's words when something is off: argument errors name the command and suggest the closest word, a bad
// profile fails before anything starts, help exists per command; `sessions`, `session` and `output` read as
// tables and headers with exit codes that say how the session ended.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { Store } from "../../../src/core/store/store.ts";
import { emptyUsage } from "../../../src/core/types.ts";
import { bunDbOpener } from "../../../src/host/sqlite-bun.ts";
import { cli, piWorld, type PiWorld } from "../../support/pi-env.ts";
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

let world: PiWorld;
let ok = "";
let failed = "";
beforeAll(async () => {
  world = await piWorld();
  const store = new Store(bunDbOpener(Database)(world.env.SUBAGENTS_DB), { isAlive: () => true });
  const add = (name: string, status: "completed" | "error") => {
    const id = store.newSessionId();
    store.createSession({ id, name, agent: "scout", cwd: world.workDir });
    const run = store.startRun(id, { prompt: "find the bug", ownerPid: process.pid });
    const usage = { ...emptyUsage(), cost: 0.0123 };
    const messages = [
      { role: "user" as const, text: "find the bug" },
      { role: "assistant" as const, text: "Looking.", toolCalls: [{ name: "bash", args: '{"command":"cat nope"}' }] },
      { role: "toolResult" as const, name: "bash", text: "cat: nope: No such file", isError: true },
    ];
    if (status === "completed")
      store.finishRun(run, {
        status,
        output: "the bug is in line 3",
        usage,
        exitCode: 0,
        toolCount: 1,
        messages,
        stderrTail: "",
        durationMs: 1200,
      });
    else
      store.finishRun(run, {
        status,
        output: "",
        error: "provider said 503",
        errorCode: "SUBAGENT_FAILED",
        usage,
        exitCode: 1,
        toolCount: 1,
        messages,
        stderrTail: "",
        durationMs: 1200,
      });
    return id;
  };
  ok = add("a-rather-long-session-name-that-will-not-fit-in-sixty-columns", "completed");
  failed = add("broken", "error");
});
afterAll(async () => {
  await world.close();
});

test("an unknown option is called an option; an unknown command gets a suggestion", async () => {
  const opt = await cli(world, ["--bogus"]);
  expect(opt.code).toBe(2);
  expect(opt.stderr).toContain("unknown option --bogus");
  const cmd = await cli(world, ["sesions"]);
  expect(cmd.code).toBe(2);
  expect(cmd.stderr).toContain("Did you mean sessions?");
  const flag = await cli(world, ["delegate", "--jsn", "x"]);
  expect(flag.stderr).toContain("delegate: unknown option --jsn. Did you mean --json?");
});

test("a negative number is a bad value, not a parser message", async () => {
  const r = await cli(world, ["delegate", "--timeout", "-5", "x"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('--timeout must be a positive number (got "-5")');
  expect(r.stderr).not.toContain("ambiguous");
});

test("an empty value and a number that is not a plain decimal are refused, never read as none or as another number", async () => {
  const cases: [string[], string][] = [
    [["run", "default", "x", "--gate", ""], "run: --gate needs a value (got an empty one)."],
    [["delegate", "x", "--model", " "], "delegate: --model needs a value (got an empty one)."],
    [["run", "default", "x", "--timeout", "0x10"], 'run: --timeout must be a positive number (got "0x10").'],
    [["delegate", "x", "--max-turns", "1e3"], "delegate: --max-turns must be a positive whole number"],
    [["run", "default", "x", "--gate", "true", "--gate-retries", "0x2"], "--gate-retries must be a whole number ≥ 0"],
    [["sessions", "--limit", "0x10"], 'sessions: --limit must be a positive whole number (got "0x10").'],
  ];
  for (const [args, said] of cases) {
    const r = await cli(world, args);
    expect([r.code, r.stderr], args.join(" ")).toEqual([2, expect.stringContaining(said)]);
  }
});

test("a shell folder deleted under it, and a folder whose name is not UTF-8: exit 2 with what is wrong", async () => {
  const main = join(import.meta.dir, "..", "..", "..", "src", "cli", "main.ts");
  const gone = join(world.root, "gone");
  const latin1 = Buffer.from(`${world.root}/caf\xe9`, "latin1");
  mkdirSync(latin1);
  // bash enters each folder (the first one then removed) and starts the CLI there: no runtime can be started in it.
  const sh = (script: string) =>
    spawnSync("bash", ["-c", script, "_", process.execPath, main, gone], { env: world.env, encoding: "utf8" });
  const deleted = sh('mkdir -p "$3" && cd "$3" && rmdir "$3" && exec "$1" "$2" run default x');
  expect([deleted.status, deleted.stderr.trim()]).toEqual([
    2,
    "subagents: the current folder no longer exists (it was deleted or moved): cd into a folder that exists, or name one with --cwd DIR",
  ]);
  const named = sh(`cd "$(printf '%s/caf\\351' "${world.root}")" && exec "$1" "$2" run default x`);
  expect(named.status).toBe(2);
  expect(named.stderr).toContain("has a name that is not UTF-8");
  expect(named.stderr).toContain("rename the folder");
});

test("help CMD prints that command's help; demo rejects unknown options", async () => {
  for (const c of ["delegate", "run", "sessions", "session", "output", "demo", "install", "profiles"]) {
    const r = await cli(world, ["help", c]);
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith(`Usage: subagents ${c}`);
    expect(r.stdout).toContain("-h, --help");
    expect(r.stdout).toContain("Exit codes:");
  }
  expect((await cli(world, ["demo", "--bogus"])).code).toBe(2);
});

test("delegate --profile typo fails before anything runs, like run typo, and names default", async () => {
  const before = (await cli(world, ["sessions", "--json"])).json.length;
  const r = await cli(world, ["delegate", "--profile", "scot", "a task"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('Unknown profile: "scot". Did you mean scout? Available profiles: default, ');
  const run = await cli(world, ["run", "scot", "a task"]);
  expect(run.code).toBe(2);
  expect(run.stderr).toContain("Available profiles: default, ");
  expect((await cli(world, ["sessions", "--json"])).json.length).toBe(before);
});

test("output: the text on stdout, a header on stderr, exit 1 for a failed session", async () => {
  const good = await cli(world, ["output", ok]);
  expect(good.code).toBe(0);
  expect(good.stdout).toBe("the bug is in line 3\n");
  expect(good.stderr).toContain(`Session ${ok}`);
  expect(good.stderr).toMatch(/Status +✓ completed/);
  const bad = await cli(world, ["output", failed]);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/Status +✗ error — provider said 503/);
  expect((await cli(world, ["output", failed, "--json"])).code).toBe(1);
});

test("session: header, the prompt labelled, a failed tool result marked", async () => {
  const r = await cli(world, ["session", failed]);
  expect(r.code).toBe(1);
  expect(r.stdout).toMatch(/Agent +scout/);
  expect(r.stdout).toMatch(/Runs +1 · last took \d+\.\ds · \$0\.0123/);
  expect(r.stdout).toContain("Prompt:\n  find the bug");
  expect(r.stdout).toContain("    ✗ bash failed:\n      cat: nope: No such file");
  expect((await cli(world, ["session", ok])).code).toBe(0);
});

test("sessions piped: a header row and full cells", async () => {
  const r = await cli(world, ["sessions"]);
  const lines = r.stdout.trim().split("\n");
  expect(lines[0]).toMatch(/^ID +STATUS +AGENT +COST +UPDATED +NAME$/);
  expect(
    lines.some((l) => l.startsWith(ok) && l.endsWith("a-rather-long-session-name-that-will-not-fit-in-sixty-columns")),
  ).toBe(true);
  const wide = await cli(world, ["sessions", "--wide"]);
  expect(wide.stdout.split("\n")[0]).toMatch(
    /^ID +STATUS +AGENT +RUNS +COST +TOKENS IN\/OUT\/CACHE +TIME +UPDATED +NAME +CWD$/,
  );
});
