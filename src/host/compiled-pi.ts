// The user's own pi, compiled once per version into a cached executable with our child extension built in
// (DESIGN §2): when the user's pi is newer than the one inside our executable, its children would otherwise run
// under Node, parsing pi's whole bundle and loading our child extension through jiti in every child. The
// compile runs in the background (`subagents __compile-pi`, spawned detached the first time such a pi is
// chosen for a run); until it is ready, children run the user's pi as it is. A pi whose bundle does not have
// the shape our hooks need is marked failed once and never retried for that version.
import { spawn } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { PiPackage } from "./pi-discovery.ts";

/** The runtime under which pi's bundle runs once compiled. */
export const COMPILED_EXE = "pi";
const READY = "ready";
const FAILED = "failed";
const LOCK = "compiling";
/** A compile that left its lock this long ago has died: try again. */
export const STALE_LOCK_MS = 5 * 60_000;

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
  const home = env.HOME || os.homedir();
  const base = [env.XDG_CACHE_HOME, home ? path.join(home, ".cache") : undefined, os.tmpdir()].find((b): b is string => !!b && path.isAbsolute(b))!;
  return path.join(base, "subagents", "compiled-pi");
}

export function readyCompiledPi(dir: string): string | null {
  return fs.existsSync(path.join(dir, READY)) ? path.join(dir, COMPILED_EXE) : null;
}

/** Starts `binary __compile-pi` in the background unless it is running, ready, or failed before. */
export function startCompile(binary: string, pkg: PiPackage, dir: string): void {
  if (fs.existsSync(path.join(dir, READY)) || fs.existsSync(path.join(dir, FAILED))) return;
  const lock = path.join(dir, LOCK);
  try {
    fs.mkdirSync(dir, { recursive: true });
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: "wx" });
    } catch {
      if (Date.now() - fs.statSync(lock).mtimeMs < STALE_LOCK_MS) return; // another process compiles it
      fs.writeFileSync(lock, String(process.pid));
    }
    const child = spawn(binary, ["__compile-pi", pkg.dir, dir], { detached: true, stdio: "ignore", env: { ...process.env, SUBAGENTS_ROLE: "" } });
    child.unref();
  } catch {
    // an unwritable cache: children keep running the user's pi as it is
  }
}

export const compiledPiMarkers = { READY, FAILED, LOCK };
