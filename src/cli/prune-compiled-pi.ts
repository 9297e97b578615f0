// `subagents prune`: the user's pi compiled once per version (src/host/compiled-pi.ts, ~130 MB each) piles up as pi
// or subagents are upgraded. Keeps the compiled pi children would use now (the user's pi, when newer than the pi
// inside the subagents binary that compiles it) and removes the others and any half-written one. A folder whose
// compile is running (a fresh lock) is left alone.
import * as fs from "node:fs";
import * as path from "node:path";
import { compiledPiDir, compiledPiMarkers, compiledPiRoot, STALE_LOCK_MS } from "../host/compiled-pi.ts";
import { installedEmbedded, selfEmbedded, type EmbeddedPi } from "../host/embedded-pi.ts";
import { compareVersions, findPi, searchPlaces } from "../host/pi-discovery.ts";

export type CompiledPiEntry = { dir: string; bytes: number };

/** Bytes on disk under `p`, symlinks counted as links (the linked pi package files are not ours). */
function sizeOf(p: string): number {
  const st = fs.lstatSync(p, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  return fs.readdirSync(p).reduce((n, f) => n + sizeOf(path.join(p, f)), 0);
}

/** The compiled pis children would use now: one per subagents binary that can compile (this one, the installed one). */
function inUse(env: Record<string, string | undefined>, cwd: string, runtimeDir: string): Set<string> {
  const user = findPi(searchPlaces({ env, cwd, home: env.HOME }));
  const keep = new Set<string>();
  if (!user) return keep;
  const binaries = [selfEmbedded(), installedEmbedded(runtimeDir)].filter((e): e is EmbeddedPi => !!e && e.argv.length === 1);
  for (const e of binaries) {
    if (compareVersions(e.version, user.version) >= 0) continue; // the embedded pi runs children, not a compiled one
    const dir = compiledPiDir(env, user, e.argv[0]);
    if (dir) keep.add(dir);
  }
  return keep;
}

/** The compiled-pi folders to remove (all of them when `remove`), with their sizes. */
export function pruneCompiledPis(opts: { env: Record<string, string | undefined>; cwd: string; runtimeDir: string; remove: boolean }): CompiledPiEntry[] {
  const keep = inUse(opts.env, opts.cwd, opts.runtimeDir);
  const root = compiledPiRoot(opts.env);
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const { READY, FAILED, LOCK } = compiledPiMarkers;
  const out: CompiledPiEntry[] = [];
  for (const name of names.sort()) {
    const dir = path.join(root, name);
    const lock = fs.statSync(path.join(dir, LOCK), { throwIfNoEntry: false });
    if (lock && Date.now() - lock.mtimeMs < STALE_LOCK_MS) continue; // being compiled right now
    // The one in use stays once finished (a failed marker stops endless retries); half-written, it goes.
    if (keep.has(dir) && (fs.existsSync(path.join(dir, READY)) || fs.existsSync(path.join(dir, FAILED)))) continue;
    out.push({ dir, bytes: sizeOf(dir) });
    if (opts.remove) fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
