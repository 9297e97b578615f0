// `subagents prune`: the user's pi compiled once per version (src/host/compiled-pi.ts, ~130 MB each) piles up as pi
// or subagents are upgraded. Keeps every compiled pi an installed pi still needs — whatever pi this prune itself
// would find — and removes the others and any half-written one. Needed means: the folder's record (source.json)
// names a pi package and a subagents binary that are both still there, unchanged (the folder's name is derived
// from them); or, for a folder from before that record, children would use it now (the pi on PATH or above the
// working folder, with this binary or the one recorded in pi's agent dir). A folder being compiled is left alone.
import * as fs from "node:fs";
import * as path from "node:path";
import { compiledPiDir, compiledPiRoot } from "../../host/compiled-pi.ts";
import { compileState, readSource } from "../../host/compiled-pi-state.ts";
import { installedEmbedded, selfEmbedded, type EmbeddedPi } from "../../host/embedded-pi.ts";
import { compareVersions, findPi, readPiPackage, searchPlaces } from "../../host/pi-discovery.ts";

export type CompiledPiEntry = { dir: string; bytes: number };
export type KeptCompiledPi = { dir: string; why: string };

/** Bytes on disk under `p`, symlinks counted as links (the linked pi package files are not ours). */
function sizeOf(p: string): number {
  const st = fs.lstatSync(p, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  return fs.readdirSync(p).reduce((n, f) => n + sizeOf(path.join(p, f)), 0);
}

/** The compiled pis children would use now (by folder name), with why: one per subagents binary that can compile. */
function inUseNow(env: Record<string, string | undefined>, cwd: string, runtimeDir: string): Map<string, string> {
  const user = findPi(searchPlaces({ env, cwd, home: env.HOME }));
  const keep = new Map<string, string>();
  if (!user) return keep;
  const binaries = [selfEmbedded(), installedEmbedded(runtimeDir)].filter(
    (e): e is EmbeddedPi => !!e && e.argv.length === 1,
  );
  for (const e of binaries) {
    if (compareVersions(e.version, user.version) >= 0) continue; // the embedded pi runs children, not a compiled one
    const dir = compiledPiDir(env, user, e.argv[0]);
    if (dir)
      keep.set(path.basename(dir), `children use it now: pi ${user.version} at ${user.dir}, compiled by ${e.argv[0]}`);
  }
  return keep;
}

/** Why an installed pi still needs this folder (its recorded pi and binary are there, as they were), or null. */
function neededBySource(env: Record<string, string | undefined>, dir: string): string | null {
  const source = readSource(dir);
  if (!source) return null;
  const pkg = readPiPackage(source.pkgDir);
  const expected = pkg ? compiledPiDir(env, pkg, source.binary) : null;
  if (!pkg || !expected || path.basename(expected) !== path.basename(dir)) return null;
  return `pi ${pkg.version} at ${pkg.dir} still needs it (compiled by ${source.binary})`;
}

export type CompiledPiPrune = { removed: CompiledPiEntry[]; kept: KeptCompiledPi[] };

/** The compiled-pi folders to remove (all of them when `remove`), with their sizes, and those kept with why. */
export function pruneCompiledPis(opts: {
  env: Record<string, string | undefined>;
  cwd: string;
  runtimeDir: string;
  remove: boolean;
}): CompiledPiPrune {
  const now = inUseNow(opts.env, opts.cwd, opts.runtimeDir);
  const root = compiledPiRoot(opts.env);
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return { removed: [], kept: [] };
  }
  const removed: CompiledPiEntry[] = [];
  const kept: KeptCompiledPi[] = [];
  for (const name of names.sort()) {
    const dir = path.join(root, name);
    if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) continue;
    const state = compileState(dir);
    if (state.kind === "compiling") {
      kept.push({ dir, why: `being compiled now (pid ${state.lock.pid})` });
      continue;
    }
    // A needed one stays once finished (its failure record holds the wait before a retry); half-written, it goes.
    const why = state.kind === "pending" ? null : (neededBySource(opts.env, dir) ?? now.get(name) ?? null);
    if (why) {
      kept.push({
        dir,
        why: state.kind === "failed" ? `${why}; its compile failed, the record is kept for the retry` : why,
      });
      continue;
    }
    removed.push({ dir, bytes: sizeOf(dir) });
    if (opts.remove) fs.rmSync(dir, { recursive: true, force: true });
  }
  return { removed, kept };
}
