// doctor, prune, completion and install --bin, through the real CLI (source and the compiled binary).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { spawnSync } from "node:child_process";
import pkg from "../../../package.json" with { type: "json" };
import { COMPLETIONS } from "../../../src/cli/commands/completion.ts";
import { childSessionFile } from "../../../src/core/run/session-file.ts";
import { Store } from "../../../src/core/store/store.ts";
import { emptyUsage } from "../../../src/core/types.ts";
import { bunDbOpener } from "../../../src/host/sqlite-bun.ts";
import { compiledPiDir } from "../../../src/host/compiled-pi.ts";
import { readPiPackage } from "../../../src/host/pi-discovery.ts";
import { procStartTime } from "../../../src/host/process-identity.ts";
import { cli, CURRENT_PI_RE, NODE24, PI_PACKAGE_DIRS, piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";

let world: PiWorld;
beforeAll(async () => {
  world = await piWorld();
});
afterAll(async () => {
  await world.close();
});

type DoctorOut = { ok: boolean; checks: { name: string; status: string; detail: string; fix?: string }[] };
const doctor = async (env: Record<string, string> = {}, binary = true) => {
  const r = await cli(world, ["doctor", "--json"], { binary, env });
  return { ...r, report: JSON.parse(r.stdout) as DoctorOut };
};
const check = (d: DoctorOut, name: string) => d.checks.find((c) => c.name === name)!;

test("doctor: a healthy setup is all ✓/! and exits 0; versions, children, model credentials and the database are named", async () => {
  expect((await cli(world, ["install"], { binary: true })).code).toBe(0);
  const { code, report } = await doctor();
  expect(report.checks.filter((c) => c.status === "fail")).toEqual([]);
  expect(code).toBe(0);
  expect(check(report, "version").detail).toMatch(
    new RegExp(`^subagents ${pkg.version.replaceAll(".", "\\.")} · pi ${CURRENT_PI_RE} inside · commit [0-9a-f]{12}`),
  );
  expect(check(report, "children").detail).toContain("embedded");
  expect(check(report, "model")).toEqual({
    name: "model",
    status: "ok",
    detail: "fake/fake-model, credentials from models.json",
  });
  expect(check(report, "database").detail).toContain(world.env.SUBAGENTS_DB);
  expect(check(report, "extension")).toMatchObject({
    status: "ok",
    detail: expect.stringContaining("same as this binary"),
  });
  // An MCP client's first exchange with `subagents mcp`: initialize and tools/list.
  expect(check(report, "mcp")).toMatchObject({ status: "ok", detail: expect.stringContaining(", 5 tools)") });
  // The human form: one line per check with its mark.
  const text = await cli(world, ["doctor"], { binary: true });
  expect(text.stdout.split("\n").filter((l) => /^[✓!✗] /.test(l)).length).toBe(report.checks.length);
}, 60_000);

test("doctor: exits 1 naming the database when SUBAGENTS_DB cannot be written, with a fix", async () => {
  const blocker = join(world.root, "not-a-folder");
  writeFileSync(blocker, "a file where a folder should be");
  const db = join(blocker, "sub", "subagents.db");
  const { code, report, stdout } = await doctor({ SUBAGENTS_DB: db });
  expect(code).toBe(1);
  expect(check(report, "database")).toMatchObject({
    status: "fail",
    detail: expect.stringContaining(db),
    fix: expect.stringContaining("SUBAGENTS_DB"),
  });
  // `subagents mcp` cannot serve without its database either, and says why.
  expect(check(report, "mcp")).toMatchObject({ status: "fail", detail: expect.stringContaining(db) });
  const text = await cli(world, ["doctor"], { binary: true, env: { SUBAGENTS_DB: db } });
  expect(text.code).toBe(1);
  expect(text.stdout).toMatch(new RegExp(`✗ database +${db.replaceAll("/", "\\/")} cannot be created`));
  expect(stdout).not.toContain("internal error");
}, 60_000);

test("doctor: a provider without credentials is ✗ with a fix; with a key it is ✓ and the key is never printed", async () => {
  world.setSubagentSettings({}, { defaultProvider: "anthropic", defaultModel: "claude-sonnet-4-5" });
  try {
    const missing = await doctor({ ANTHROPIC_API_KEY: "" });
    expect(missing.code).toBe(1);
    expect(check(missing.report, "model")).toMatchObject({
      status: "fail",
      fix: expect.stringContaining("ANTHROPIC_API_KEY"),
    });
    const secret = "sk-ant-very-secret-0123456789";
    const present = await doctor({ ANTHROPIC_API_KEY: secret });
    expect(check(present.report, "model")).toEqual({
      name: "model",
      status: "ok",
      detail: "anthropic/claude-sonnet-4-5, credentials from $ANTHROPIC_API_KEY",
    });
    expect(present.stdout).not.toContain(secret);
  } finally {
    world.setSubagentSettings({});
  }
}, 60_000);

test("doctor: an installed extension from another version is a warning naming the fix", async () => {
  const ext = join(world.agentDir, "extensions", "subagents.js");
  const original = readFileSync(ext, "utf8");
  writeFileSync(ext, "// an older subagents\n");
  try {
    const { code, report } = await doctor();
    expect(code).toBe(0);
    expect(check(report, "extension")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining("differs from this binary"),
      fix: "subagents install",
    });
  } finally {
    writeFileSync(ext, original);
  }
}, 60_000);

const DAY = 86_400_000;

/** A database with sessions of known ages, each with its child session file. */
function seed(dbFile: string) {
  const t0 = Date.now();
  let now = t0;
  const alive = new Set([process.pid]);
  const store = new Store(bunDbOpener(Database)(dbFile), { isAlive: (o) => alive.has(o.pid), now: () => now });
  const big = "x".repeat(2_000_000);
  const make = (name: string, ageDays: number, finish: boolean) => {
    now = t0 - ageDays * DAY;
    const id = store.newSessionId();
    const file = childSessionFile(world.agentDir, world.workDir, "worker", id);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, "{}\n");
    store.createSession({ id, name, agent: "worker", cwd: world.workDir, sessionFile: file });
    const run = store.startRun(id, { prompt: "p", ownerPid: process.pid });
    if (finish)
      store.finishRun(run, {
        status: "completed",
        output: big,
        usage: emptyUsage(),
        exitCode: 0,
        toolCount: 0,
        messages: [{ role: "user", text: "p" }],
        stderrTail: "",
        durationMs: 1,
      });
    return { id, file };
  };
  const sessions = {
    old1: make("old-1", 60, true),
    old2: make("old-2", 45, true),
    runningOld: make("running-old", 50, false),
    recent: make("recent", 1, true),
  };
  return sessions;
}

test("prune: --dry-run changes nothing; prune deletes old sessions and their files, never a running one, and VACUUMs", async () => {
  const db = join(world.root, "prune.db");
  const s = seed(db);
  const env = { SUBAGENTS_DB: db };
  const sizeBefore = statSync(db).size + (existsSync(`${db}-wal`) ? statSync(`${db}-wal`).size : 0);

  // Background event logs next to the database, and two supervisor logs: one from long ago, one fresh.
  const logs = join(world.root, "logs");
  mkdirSync(logs, { recursive: true });
  const logOf = (id: string) => join(logs, `${id}.log`);
  for (const x of [s.old1, s.recent]) writeFileSync(logOf(x.id), "12:00:00 → bash → ls\n");
  const oldSupervisor = join(logs, "supervisor-1-old.log");
  const newSupervisor = join(logs, "supervisor-2-new.log");
  writeFileSync(oldSupervisor, "x\n");
  writeFileSync(newSupervisor, "x\n");
  utimesSync(oldSupervisor, new Date(Date.now() - 40 * DAY), new Date(Date.now() - 40 * DAY));

  const dry = await cli(world, ["prune", "--dry-run", "--json"], { env });
  expect(dry.code, dry.stderr).toBe(0);
  expect(dry.json[0].sessions.map((x: { name: string }) => x.name).sort()).toEqual(["old-1", "old-2"]);
  expect(dry.json[0].logs).toEqual([logOf(s.old1.id), oldSupervisor]);
  expect(existsSync(logOf(s.old1.id))).toBe(true);
  expect(existsSync(s.old1.file)).toBe(true);
  expect((await cli(world, ["output", s.old1.id], { env })).code).toBe(0);

  const r = await cli(world, ["prune"], { env });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain("Deleted 2 session(s) and 2 session file(s), 2 log file(s)");
  expect([logOf(s.old1.id), oldSupervisor].filter(existsSync)).toEqual([]);
  expect([logOf(s.recent.id), newSupervisor].filter(existsSync)).toEqual([logOf(s.recent.id), newSupervisor]);
  for (const gone of [s.old1, s.old2]) {
    expect(existsSync(gone.file)).toBe(false);
    expect((await cli(world, ["output", gone.id], { env })).stderr).toContain("not found");
  }
  for (const kept of [s.runningOld, s.recent]) expect(existsSync(kept.file)).toBe(true);
  const listed = (await cli(world, ["sessions", "--json"], { env })).json.map((x) => x.name).sort();
  expect(listed).toEqual(["recent", "running-old"]);
  const sizeAfter = statSync(db).size + (existsSync(`${db}-wal`) ? statSync(`${db}-wal`).size : 0);
  expect(sizeAfter).toBeLessThan(sizeBefore / 2); // two 2 MB outputs gone and the file compacted

  // --keep N alone: all but the newest N (still never the running one).
  const keep = await cli(world, ["prune", "--keep", "0", "--json"], { env });
  expect(keep.json[0].sessions.map((x: { name: string }) => x.name)).toEqual(["recent"]);
}, 60_000);

test("prune: removes compiled pis no installed pi needs (other versions, other builds, gone pis, half-written), keeps the one in use, one another installed pi needs and one being compiled, saying why", async () => {
  // The user's pi: the real bundle under a package that says it is a later release than the embedded pi.
  const project = join(world.root, "prune-project");
  const pkgDir = join(project, "node_modules", "@earendil-works", "pi-coding-agent");
  mkdirSync(pkgDir, { recursive: true });
  const real = JSON.parse(readFileSync(join(PI_PACKAGE_DIRS.current, "package.json"), "utf8"));
  writeFileSync(join(pkgDir, "package.json"), JSON.stringify({ ...real, version: "99.0.0" }));
  symlinkSync(join(PI_PACKAGE_DIRS.current, "dist"), join(pkgDir, "dist"));
  // No pi on PATH: the project's pi is the user's.
  const env = {
    PATH: `${dirname(NODE24)}:/usr/bin:/bin`,
    XDG_CACHE_HOME: join(world.root, "prune-cache"),
    SUBAGENTS_DB: join(world.root, "prune-compiled.db"),
  };
  const inUse = compiledPiDir(env, readPiPackage(pkgDir)!, join(REPO, "dist", "subagents"))!;
  const root = dirname(inUse);
  const make = (name: string, files: Record<string, number>) => {
    for (const [f, size] of Object.entries(files)) {
      mkdirSync(dirname(join(root, name, f)), { recursive: true });
      writeFileSync(join(root, name, f), "x".repeat(size));
    }
    return join(root, name);
  };
  make(basename(inUse), { pi: 3000, ready: 10 });
  const older = make("98.0.0-aaaaaaaaaaaa", { pi: 5000, ready: 10 });
  const otherBuild = make("99.0.0-bbbbbbbbbbbb", { pi: 4000, ready: 10 });
  // Half-written: its lock names a process that has ended (the kernel may hand its pid out again; its start time differs).
  const dead = Bun.spawn({ cmd: ["true"] });
  await dead.exited;
  const halfWritten = make("99.0.0-cccccccccccc", { ".build-x/pi": 1000 });
  writeFileSync(
    join(halfWritten, "compiling"),
    JSON.stringify({ pid: dead.pid, startTime: "1", at: Date.now(), tries: 1 }),
  );
  // Being compiled: its lock names a live process (this test's).
  const compiling = make("97.0.0-dddddddddddd", { ".build-y/pi": 1000 });
  writeFileSync(
    join(compiling, "compiling"),
    JSON.stringify({ pid: process.pid, startTime: procStartTime(process.pid), at: Date.now(), tries: 1 }),
  );
  // Another installed pi (not on PATH, not above the working folder) still needs its compiled copy: its record says so.
  const otherPkg = join(world.root, "prune-other-pi", "node_modules", "@earendil-works", "pi-coding-agent");
  mkdirSync(otherPkg, { recursive: true });
  writeFileSync(join(otherPkg, "package.json"), JSON.stringify({ ...real, version: "99.5.0" }));
  symlinkSync(join(PI_PACKAGE_DIRS.current, "dist"), join(otherPkg, "dist"));
  const binary = join(REPO, "dist", "subagents");
  const needed = compiledPiDir(env, readPiPackage(otherPkg)!, binary)!;
  make(basename(needed), { pi: 2000, ready: 10 });
  writeFileSync(join(needed, "source.json"), JSON.stringify({ pkgDir: otherPkg, binary, piVersion: "99.5.0" }));
  // A compiled copy whose pi was uninstalled goes, record or not.
  const uninstalled = make("99.6.0-eeeeeeeeeeee", { pi: 1000, ready: 10 });
  writeFileSync(
    join(uninstalled, "source.json"),
    JSON.stringify({ pkgDir: join(world.root, "no-such-pi"), binary, piVersion: "99.6.0" }),
  );
  const gone = [older, otherBuild, halfWritten, uninstalled].sort();

  const dry = await cli(world, ["prune", "--dry-run", "--json"], { binary: true, env, cwd: project });
  expect(dry.code, dry.stderr).toBe(0);
  const halfBytes = 1000 + statSync(join(halfWritten, "compiling")).size;
  const uninstalledBytes = 1010 + statSync(join(uninstalled, "source.json")).size;
  expect(dry.json[0].compiledPis).toEqual(
    gone.map((dir) => ({
      dir,
      bytes: { [older]: 5010, [otherBuild]: 4010, [halfWritten]: halfBytes, [uninstalled]: uninstalledBytes }[dir],
    })),
  );
  expect(dry.json[0].keptCompiledPis).toEqual(
    [
      { dir: compiling, why: `being compiled now (pid ${process.pid})` },
      { dir: inUse, why: `children use it now: pi 99.0.0 at ${pkgDir}, compiled by ${binary}` },
      { dir: needed, why: `pi 99.5.0 at ${otherPkg} still needs it (compiled by ${binary})` },
    ].sort((a, b) => a.dir.localeCompare(b.dir)),
  );
  expect(gone.filter(existsSync)).toEqual(gone);

  const r = await cli(world, ["prune"], { binary: true, env, cwd: project });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain(`removed  ${older}  (4.9 KB)`);
  expect(r.stdout).toContain("Removed 4 compiled pi(s) no longer used by children;");
  expect(r.stdout).toContain(`kept  ${needed}  (pi 99.5.0 at ${otherPkg} still needs it (compiled by ${binary}))`);
  expect(gone.filter(existsSync)).toEqual([]);
  expect([inUse, compiling, needed].filter(existsSync)).toEqual([inUse, compiling, needed]);
}, 60_000);

test("prune: bad ages and counts are usage errors", async () => {
  for (const args of [["--older-than", "30"], ["--older-than", "3x"], ["--keep=-1"], ["--keep", "two"]]) {
    const r = await cli(world, ["prune", ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/prune: --(older-than|keep)/);
  }
});

test("completion: covers every command the CLI knows, and bash completes commands and options", async () => {
  const unknown = await cli(world, ["no-such-command"]);
  const known = /Commands: ([^.]+)\./.exec(unknown.stderr)![1].split(", ");
  expect(Object.keys(COMPLETIONS).sort()).toEqual(known.sort());
  const script = (await cli(world, ["completion", "bash"])).stdout;
  const complete = (words: string[]) => {
    const r = spawnSync(
      "bash",
      [
        "-c",
        `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _subagents; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { encoding: "utf8" },
    );
    return r.stdout.trim().split("\n");
  };
  expect(complete(["subagents", "pr"]).sort()).toEqual(["profiles", "prune"]);
  expect(complete(["subagents", "prune", "--d"])).toEqual(["--dry-run"]);
  expect((await cli(world, ["completion", "zsh"])).stdout).toStartWith("#compdef subagents");
  expect((await cli(world, ["completion", "fish"])).stdout).toContain(
    '-n "__fish_seen_subcommand_from doctor" -l json',
  );
  const bad = await cli(world, ["completion", "tcsh"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("bash, zsh or fish");
});

test("install --bin copies the executable into --prefix and says when that is not on PATH", async () => {
  const prefix = join(world.root, "bin-dir");
  const r = await cli(world, ["install", "--bin", "--prefix", prefix], { binary: true });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain(`${prefix} is not on your PATH`);
  const v = spawnSync(join(prefix, "subagents"), ["--version"], { encoding: "utf8" });
  expect(v.stdout).toContain(`subagents ${pkg.version}`);
  const fromSource = await cli(world, ["install", "--bin", "--prefix", prefix]);
  expect(fromSource.code).toBe(2);
  expect(fromSource.stderr).toContain("copies the compiled executable");
}, 60_000);

test("doctor: the extension installed as a pi package counts; installed both ways is a warning", async () => {
  world.setSubagentSettings({}, { packages: ["npm:subagents"] });
  const ext = join(world.agentDir, "extensions", "subagents.js");
  const original = readFileSync(ext, "utf8");
  try {
    const twice = await doctor();
    expect(check(twice.report, "extension")).toMatchObject({
      status: "warn",
      detail: expect.stringContaining("installed twice"),
      fix: expect.stringContaining("pi remove npm:subagents"),
    });
    rmSync(ext);
    const asPackage = await doctor();
    expect(check(asPackage.report, "extension")).toMatchObject({
      status: "ok",
      detail: expect.stringContaining("pi package npm:subagents"),
    });
  } finally {
    writeFileSync(ext, original);
    world.setSubagentSettings({});
  }
}, 60_000);
