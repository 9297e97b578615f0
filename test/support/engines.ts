// The real engines (bubblewrap, Docker, Slurm, cron) for the engine tests: installed and started by engines.sh on a
// Debian machine as root (CI runs as root with apt), once per machine. A test whose engine cannot start never passes
// silently: in CI (CI set, as .ci/run does) it fails naming the engine and why; elsewhere it is skipped, and the
// suite's last line (test/support/run-suite.sh) lists what did not run.
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** CI: every test must run. Set by .ci/run when the CI system does not set it. */
export const MUST_RUN = !!process.env.CI && !/^(0|false|no)$/i.test(process.env.CI);

/**
 * What cannot run here and why. In CI this throws, so the test fails naming both; elsewhere it returns the skip
 * line the test prints, and notes it for the suite's summary line.
 */
export function cannotRun(what: string, why: string): string {
  const line = `${what}: ${why}`;
  if (MUST_RUN) throw new Error(`${line} — in CI (CI=${process.env.CI}) every test must run`);
  const summary = process.env.SUBAGENTS_TEST_SKIPS;
  if (summary) appendFileSync(summary, `${line}\n`);
  return `*** SKIPPING ${line} ***`;
}

export type EngineName = "bwrap" | "docker" | "slurm" | "cron" | "reflink" | "python";
/** Where the reflink engine's filesystem (xfs with copy-on-write clones) is mounted. */
export const REFLINK_MOUNT = "/run/subagents-engines/reflink";
const SCRIPT = join(import.meta.dir, "engines.sh");
const done = new Map<EngineName, string | null>();

const ok = (cmd: string[]) => spawnSync(cmd[0], cmd.slice(1), { stdio: "ignore", timeout: 20_000 }).status === 0;

/** Already usable (a developer's machine with the engine set up, or a second run): nothing to install. */
function ready(engine: EngineName): boolean {
  if (engine === "bwrap") return ok(["bwrap", "--ro-bind", "/", "/", "--cap-drop", "ALL", "true"]);
  if (engine === "docker") return ok(["docker", "image", "inspect", "subagents-test/base"]);
  if (engine === "cron") return ok(["pgrep", "-x", "cron"]) && ok(["sh", "-c", "command -v crontab"]);
  if (engine === "python") return ok(["/usr/bin/python3", "-m", "venv", "--help"]);
  if (engine === "reflink")
    return ok([
      "sh",
      "-c",
      `cd ${REFLINK_MOUNT} && f=$(mktemp -p .) && cp --reflink=always "$f" "$f.c" && rm -f "$f" "$f.c"`,
    ]);
  return ok(["sinfo", "-h"]) && ok(["srun", "--quiet", "true"]);
}

/** Why this engine cannot be tested here, or null once it is ready. */
export function ensureEngine(engine: EngineName): string | null {
  if (done.has(engine)) return done.get(engine)!;
  if (ready(engine)) {
    done.set(engine, null);
    return null;
  }
  let why: string | null = null;
  if (process.getuid?.() !== 0) why = "not root";
  else if (!existsSync("/usr/bin/apt-get")) why = "no apt-get";
  if (why) {
    const msg = cannotRun(
      `the ${engine} engine tests`,
      `${why} (test/support/engines.sh installs and starts the engines as root with apt)`,
    );
    console.warn(`\n${msg}\n`);
    done.set(engine, msg);
    return msg;
  }
  const t0 = performance.now();
  const r = spawnSync("sh", [SCRIPT, engine], {
    encoding: "utf8",
    timeout: 300_000,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (r.status !== 0)
    throw new Error(
      `the ${engine} engine cannot start: engines.sh exited ${r.status}: ${r.stderr || r.stdout} — see /run/subagents-engines/${engine}.log`,
    );
  console.warn(`engine ${engine} ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  done.set(engine, null);
  return null;
}

/** The session whose recorded prompt carries the marker (a foreground run prints its id only at its end). */
export function sessionOfPrompt(dbPath: string, marker: string): string | null {
  const { Database } = require("bun:sqlite");
  const db = new Database(dbPath, { readonly: true });
  const row = db
    .query("SELECT session_id FROM runs WHERE prompt LIKE ? ORDER BY id DESC LIMIT 1")
    .get(`%${marker}%`) as { session_id: string } | null;
  db.close();
  return row?.session_id ?? null;
}

/** Waits until the sleep with this exact argv runs (the task's bash call has started). */
export async function untilSleeping(marker: string, ms = 60_000): Promise<boolean> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (
      spawnSync("pgrep", ["-f", `^${marker}`])
        .stdout.toString()
        .trim()
    )
      return true;
    await Bun.sleep(100);
  }
  return false;
}

/**
 * Holds an engine for this test file alone until the returned release is called: test files run in parallel, and
 * a file that checks the engine's global state ("no container of ours is left", squeue) must not see another
 * file's work. A `flock` process holds the lock; it ends (and frees it) when its stdin closes, so a test process
 * that dies never leaves the lock held.
 */
export async function holdEngine(engine: EngineName): Promise<() => Promise<void>> {
  const lock = join(tmpdir(), `subagents-tests-${engine}.lock`);
  const holder = Bun.spawn({
    cmd: ["flock", lock, "-c", "echo held; exec cat >/dev/null"],
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const first = await holder.stdout.getReader().read();
  if (!new TextDecoder().decode(first.value ?? new Uint8Array()).startsWith("held"))
    throw new Error(`could not hold the ${engine} engine (flock exited ${await holder.exited})`);
  return async () => {
    holder.stdin.end();
    await holder.exited;
  };
}

/** Root, for the tests that act as another user or mount a small file system: why not, or null. */
export function ensureRoot(what: string): string | null {
  if (process.getuid?.() === 0) return null;
  return cannotRun(what, "not root (it switches to another user or mounts a small tmpfs)");
}
