// The user's own pi, compiled once per version into a cached executable with our child extension built in: when the
// user's pi is newer than the one inside our executable, its children would otherwise run under Node, parsing pi's
// whole bundle and loading our child extension through jiti in every child (about 2–4× the start-up time). The
// compile runs in the background (`subagents __compile-pi`, started the first time such a pi is chosen for a run)
// and depends on nothing of the run that started it: its working folder is the cache folder, its environment a
// few variables, its process detached. Until it is ready, children run the user's pi as it is. It heals by
// itself: a lock whose process is gone is stale at once, and a failure is retried by a later run after a short
// wait — except a pi whose bundle does not have what our hooks need, which is final for that pi and build.
import { spawn } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  COMPILED_EXE,
  compileState,
  createLock,
  LOCK,
  LOG,
  lockFor,
  MAX_INTERRUPTED,
  READY,
  readFailure,
  readLock,
  tail,
  writeFailure,
  writeLock,
  type CompileState,
} from "./compiled-pi-state.ts";
import type { PiPackage } from "./pi-discovery.ts";
import { cacheBases, cacheRoot, cacheRootPath, ourCacheRoot } from "./private-files.ts";

/** One folder per (our binary, the user's pi package and its bundle's mtime): a reinstalled pi or a new
 *  `subagents` gets a fresh compile, never a stale one. */
export function compiledPiDir(env: Record<string, string | undefined>, pkg: PiPackage, binary: string): string | null {
  let stamp: string;
  try {
    const runtime = fs.statSync(path.join(pkg.dir, "dist", "bundle", "cli-runtime.js"));
    const bin = fs.statSync(binary);
    stamp = [pkg.dir, runtime.mtimeMs, runtime.size, binary, bin.mtimeMs, bin.size].join("\0");
  } catch {
    return null; // no bundle (pi ≤ 0.73) or no binary: nothing to compile
  }
  const hash = crypto.createHash("sha256").update(stamp).digest("hex").slice(0, 12);
  return path.join(compiledPiRoot(env), `${pkg.version}-${hash}`);
}

/** The folder holding every compiled pi (`subagents prune` cleans it). */
export function compiledPiRoot(env: Record<string, string | undefined>): string {
  // Beside the embedded pi's own cache (src/embedded/pi-assets.ts): XDG cache, else ~/.cache, else the temp dir.
  return path.join(cacheRootPath(cacheBases(env)[0]), "compiled-pi");
}

export function readyCompiledPi(dir: string): string | null {
  // Only from a cache folder of ours that nobody else can write: the file found there is run as this user.
  if (!ourCacheRoot(path.dirname(path.dirname(dir)))) return null;
  return fs.existsSync(path.join(dir, READY)) ? path.join(dir, COMPILED_EXE) : null;
}

/** The compile's own environment: what finding programs and writing files needs, nothing of the run's (a role,
 *  BUN_BE_BUN, NODE_OPTIONS or a temp folder about to be removed would change or break it). */
export function compileEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = { PATH: env.PATH || "/usr/local/bin:/usr/bin:/bin" };
  for (const k of ["HOME", "LANG", "LC_ALL"]) if (env[k]) out[k] = env[k]!;
  if (env.TMPDIR && fs.statSync(env.TMPDIR, { throwIfNoEntry: false })?.isDirectory()) out.TMPDIR = env.TMPDIR;
  return out;
}

/** A stale lock left by compiles that were killed MAX_INTERRUPTED times in a row: recorded as a failure, so the next
 *  try waits like any other instead of starting a compile on every run. */
function recordInterrupted(dir: string, tries: number): void {
  let log = "";
  try {
    log = tail(fs.readFileSync(path.join(dir, LOG), "utf8"));
  } catch {
    // no output
  }
  const attempts = (readFailure(dir)?.attempts ?? 0) + 1;
  const reason = `the compile ended ${tries} times in a row without a result (killed?)${log ? `; its last output:\n${log}` : ""}`;
  writeFailure(dir, { at: Date.now(), reason, build: "", final: false, attempts });
  fs.rmSync(path.join(dir, LOCK), { force: true });
}

/**
 * Starts `binary __compile-pi` in the background unless it is ready, being compiled, failed for good, or failed
 * lately (it waits retryDelayMs). Returns the state after: what `--version --verbose` and `doctor` report.
 */
export function startCompile(
  binary: string,
  pkg: PiPackage,
  dir: string,
  env: Record<string, string | undefined>,
): CompileState {
  const before = compileState(dir);
  if (before.kind === "ready" || before.kind === "compiling") return before;
  if (before.kind === "failed" && (before.retryAt === null || Date.now() < before.retryAt)) return before;
  try {
    // Our cache folder first, checked: what is compiled here is run as this user.
    cacheRoot(path.dirname(path.dirname(path.dirname(dir))));
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stale = readLock(dir); // a lock here names a process that is gone (else the state would be "compiling")
    const tries = stale ? stale.tries + 1 : 1;
    if (stale && stale.tries >= MAX_INTERRUPTED) {
      recordInterrupted(dir, stale.tries);
      return compileState(dir);
    }
    if (stale) writeLock(dir, lockFor(process.pid, tries));
    else if (!createLock(dir, lockFor(process.pid, tries))) return compileState(dir); // another run just started it
    const log = fs.openSync(path.join(dir, LOG), "w");
    let pid: number | undefined;
    try {
      const child = spawn(binary, ["__compile-pi", pkg.dir, dir], {
        cwd: dir,
        detached: true,
        stdio: ["ignore", log, log],
        env: compileEnv(env),
      });
      child.on("error", () => {}); // a binary that cannot start: the lock below is removed, a later run tries again
      child.unref();
      pid = child.pid;
    } finally {
      fs.closeSync(log);
    }
    if (pid) writeLock(dir, lockFor(pid, tries));
    else fs.rmSync(path.join(dir, LOCK), { force: true });
  } catch {
    // an unwritable cache: children keep running the user's pi as it is
    return before;
  }
  return compileState(dir);
}
