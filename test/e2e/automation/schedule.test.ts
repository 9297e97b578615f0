// Schedules on a real cron daemon (Debian's cron, started by test/support/engines.sh): `schedule add` writes a
// tagged line into root's crontab, cron fires it within a minute or two, and the run it starts reaches the scripted
// model server with the test world's environment (the schedule's saved PI_CODING_AGENT_DIR, SUBAGENTS_DB, PATH)
// and is recorded under the schedule's name. Removing it leaves every other crontab line byte for byte as it was.
// `schedule run` (now, once) runs the same way; a second run while one is going is skipped and recorded.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { formatLine } from "../../../src/core/schedule/crontab-lines.ts";
import { cli, piWorld, REPO, until, type PiWorld } from "../../support/pi-env.ts";
import { ensureEngine, holdEngine } from "../../support/engines.ts";

let world: PiWorld;
let skip: string | null = null;
let release: (() => Promise<void>) | undefined;
/** Root's crontab before this file ran (null: there was none), put back in afterAll. */
let original: string | null = null;

const crontab = (): string | null => {
  const r = spawnSync("crontab", ["-l"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout : null;
};
const setCrontab = (text: string | null) => {
  const r =
    text === null
      ? spawnSync("crontab", ["-r"], { encoding: "utf8" })
      : spawnSync("crontab", ["-"], { input: text, encoding: "utf8" });
  if (r.status !== 0 && text !== null) throw new Error(`crontab - failed: ${r.stderr}`);
};

beforeAll(async () => {
  skip = ensureEngine("cron");
  if (!skip) {
    release = await holdEngine("cron");
    original = crontab();
  }
  world = await piWorld();
}, 600_000);
afterAll(async () => {
  if (!skip) setCrontab(original);
  await world?.close();
  await release?.();
});

/** The sessions a schedule recorded (`sessions --json`), newest first. */
async function sessionsOf(name: string): Promise<Record<string, any>[]> {
  const r = await cli(world, ["sessions", "--json", "--limit", "200"]);
  return r.json.filter((s) => s.schedule === name);
}

test("bad input is refused with a clear error and leaves the crontab alone", async () => {
  if (skip) return console.warn(skip);
  const before = crontab();
  const cases: [string[], RegExp][] = [
    [
      ["schedule", "add", "n1", "--cron", "61 * * * *", "--", "run", "default", "x"],
      /minute "61" is out of range 0–59/,
    ],
    [["schedule", "add", "n1", "--cron", "* * * *", "--", "run", "default", "x"], /5 fields/],
    [
      ["schedule", "add", "n1", "--cron", "0 3 * * 8", "--", "run", "default", "x"],
      /day of week "8" is out of range 0–7/,
    ],
    [
      ["schedule", "add", "Bad_Name", "--cron", "* * * * *", "--", "run", "default", "x"],
      /lowercase letters, digits and "-"/,
    ],
    [["schedule", "add", "n1", "--cron", "* * * * *"], /nothing to run/],
    [["schedule", "add", "n1", "--cron", "* * * * *", "--", "sessions"], /a schedule runs run, flow, delegate/],
    [
      ["schedule", "add", "n1", "--cron", "* * * * *", "--", "run", "default", "x", "--background"],
      /--background has no place/,
    ],
    [["schedule", "rm", "never-added"], /no schedule "never-added"/],
    [["schedule", "run", "never-added"], /no schedule "never-added"/],
  ];
  for (const [args, why] of cases) {
    const r = await cli(world, args);
    expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
    expect(r.stderr).toMatch(why);
  }
  expect(crontab()).toBe(before);
  for (const sub of ["add", "list", "rm", "run"]) {
    const h = await cli(world, ["schedule", sub, "--help"]);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain(`Usage: subagents schedule ${sub}`);
  }
}, 120_000);

test("a line break in an environment value never reaches the crontab; rm removes every part of a line an older version broke", async () => {
  if (skip) return console.warn(skip);
  const foreign = "# the user's own\n17 4 * * * /bin/true\n";
  setCrontab(foreign);
  const pwned = join(world.root, `PWNED-${Date.now()}`);
  // The attacker's value: ends the line and starts a job of its own, which cron would run every minute.
  const evil = `${world.root}/x.db\n* * * * * touch ${pwned} #`;
  const add = await cli(world, ["schedule", "add", "inject", "--cron", "0 3 * * *", "--", "run", "default", "x"], {
    env: { SUBAGENTS_DB: evil },
  });
  expect(add.code, add.stderr).toBe(2);
  expect(add.stderr).toContain("SUBAGENTS_DB holds a line break");
  expect(crontab()).toBe(foreign);
  expect(existsSync(join(world.agentDir, "schedules", "inject.json"))).toBe(false);
  // What an older version wrote for the same value: its definition and its line, broken in two.
  const def = {
    version: 1,
    name: "inject",
    cron: "0 3 * * *",
    args: ["run", "default", "x"],
    cwd: world.workDir,
    command: [join(REPO, "dist", "subagents")],
    env: { PI_CODING_AGENT_DIR: world.agentDir, SUBAGENTS_DB: evil },
    createdAt: Date.now(),
  };
  mkdirSync(join(world.agentDir, "schedules"), { recursive: true });
  writeFileSync(join(world.agentDir, "schedules", "inject.json"), JSON.stringify(def));
  const line = formatLine({
    name: "inject",
    cron: def.cron,
    command: def.command,
    env: { PI_CODING_AGENT_DIR: world.agentDir, SUBAGENTS_DB: evil },
    log: join(world.agentDir, "schedules", "inject.log"),
  });
  setCrontab(`${foreign}${line}\n`);
  expect(
    crontab()!
      .split("\n")
      .filter((l) => l.includes(pwned)),
  ).toHaveLength(1);
  const rm = await cli(world, ["schedule", "rm", "inject"]);
  expect(rm.code, rm.stderr).toBe(0);
  expect(crontab()).toBe(foreign);
}, 60_000);

test("schedule run: now, once, recorded under the schedule's name (hooks see it); a second run while one is going is skipped and recorded", async () => {
  if (skip) return console.warn(skip);
  const out = join(world.root, "sched-hooks");
  mkdirSync(out, { recursive: true });
  world.setSubagentSettings({ hooks: { taskEnd: `cat > ${out}/end-$SUBAGENTS_SESSION_ID.json` } });
  const name = `now-${process.pid}`;
  const task = `scheduled slow task ${script([{ tool: "bash", args: { command: "sleep 6" } }, { finalize: { status: "SUCCESS", result: "slow done" } }])}`;
  const add = await cli(world, ["schedule", "add", name, "--cron", "0 4 1 1 *", "--", "run", "default", task], {
    binary: true,
  });
  expect(add.code, add.stderr).toBe(0);
  try {
    // The first run holds the schedule's lock until its task ends.
    const first = Bun.spawn({
      cmd: [join(REPO, "dist", "subagents"), "schedule", "run", name],
      cwd: world.root,
      env: world.env,
      stdout: "pipe",
      stderr: "pipe",
    });
    const lock = join(world.agentDir, "schedules", `${name}.lock`);
    await until("the first run's lock", () => existsSync(lock), 60_000, 50);
    const second = await cli(world, ["schedule", "run", name], { binary: true, cwd: world.root });
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr).toMatch(
      new RegExp(`skipped: the previous run of schedule ${name} \\(pid ${first.pid}, started .*\\) is still going`),
    );
    const [firstErr, firstCode] = await Promise.all([new Response(first.stderr).text(), first.exited]);
    expect(firstCode, firstErr).toBe(0);
    expect(existsSync(lock), "the lock outlived its run").toBe(false);

    const recorded = await sessionsOf(name);
    expect(recorded.length, JSON.stringify(recorded)).toBe(2);
    const ran = recorded.find((s) => s.status === "completed");
    const skipped = recorded.find((s) => s.lastErrorCode === "SKIPPED");
    expect(ran, JSON.stringify(recorded)).toBeDefined();
    expect(skipped, JSON.stringify(recorded)).toBeDefined();
    // It ran in the folder it was added from (the world's work folder), not where `schedule run` was typed.
    expect(ran!.cwd).toBe(world.workDir);
    const s = await cli(world, ["session", ran!.id, "--json"]);
    expect(s.json[0].schedule).toBe(name);
    expect(s.json[0].transcript).toContain("slow done");
    const end = JSON.parse(readFileSync(join(out, `end-${ran!.id}.json`), "utf8"));
    expect(end).toMatchObject({ event: "taskEnd", status: "completed", schedule: name });
    const list = await cli(world, ["schedule", "list", "--json"]);
    const row = list.json.find((r) => r.name === name);
    expect(row, list.stdout).toMatchObject({ cron: "0 4 1 1 *", cwd: world.workDir, inCrontab: true });
    expect(row?.last.id).toBe(recorded[0].id);
    const doctor = async () =>
      (await cli(world, ["doctor", "--json"])).json[0].checks.find((c: { name: string }) => c.name === "schedules");
    expect(await doctor()).toMatchObject({ status: "ok", detail: "1 schedule in the crontab; cron is running" });
    // Its line taken out of the crontab by hand: doctor and list say it never runs.
    setCrontab(
      crontab()!
        .split("\n")
        .filter((l) => !l.endsWith(`# subagents:${name}`))
        .join("\n"),
    );
    expect(await doctor()).toMatchObject({ status: "fail", detail: `1 schedule; ${name}: not in the crontab` });
    const listed = await cli(world, ["schedule", "list"]);
    expect(listed.stdout).toContain("not in the crontab: it never runs");
  } finally {
    world.setSubagentSettings({});
    await cli(world, ["schedule", "rm", name]);
  }
}, 180_000);

test("cron fires a schedule within a minute or two and its run is recorded; rm leaves every other crontab line untouched", async () => {
  if (skip) return console.warn(skip);
  // A crontab of someone else's: a comment, a variable, a job, and a line that only looks like ours.
  const foreign = `# the user's own crontab\nMAILTO=""\n17 4 * * * /bin/true # nightly thing\n# subagents:lookalike is only a comment\n`;
  setCrontab(foreign);
  const name = `cron-${process.pid}`;
  const marker = `cronfired-${Date.now()}`;
  const add = await cli(
    world,
    [
      "schedule",
      "add",
      name,
      "--cron",
      "* * * * *",
      "--",
      "run",
      "default",
      `${marker} ${script([{ finalize: { status: "SUCCESS", result: `fired ${marker}` } }])}`,
    ],
    { binary: true },
  );
  expect(add.code, add.stderr).toBe(0);
  const table = crontab()!;
  expect(table.startsWith(foreign), table).toBe(true);
  expect(table).toContain(`# subagents:${name}`);
  // Nothing secret in the line: only where the definition and the database are.
  const line = table.split("\n").find((l) => l.endsWith(`# subagents:${name}`))!;
  expect(line).toMatch(
    /^\* \* \* \* \* PI_CODING_AGENT_DIR='[^']+' SUBAGENTS_DB='[^']+' '\/[^']+\/subagents' schedule run /,
  );
  try {
    const log = join(world.agentDir, "schedules", `${name}.log`);
    const ran = await until(
      () =>
        `a cron-fired run of ${name} (log: ${existsSync(log) ? readFileSync(log, "utf8").slice(-1500) : "none yet"})`,
      async () => (await sessionsOf(name)).find((s) => s.status === "completed"),
      150_000,
      1000,
    );
    const s = await cli(world, ["session", ran.id, "--json"]);
    expect(s.json[0].schedule).toBe(name);
    expect(s.json[0].transcript).toContain(`fired ${marker}`);
    // The scripted model server answered it: the run reached it with the world's settings.
    expect(world.server.requests.some((q) => JSON.stringify(q.messages ?? []).includes(marker))).toBe(true);
  } finally {
    const rm = await cli(world, ["schedule", "rm", name]);
    expect(rm.code, rm.stderr).toBe(0);
  }
  expect(crontab()).toBe(foreign);
  expect(existsSync(join(world.agentDir, "schedules", `${name}.json`))).toBe(false);
}, 240_000);
