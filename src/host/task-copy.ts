// A task's own copy of a folder, where its child cannot enter our namespace (a container, a Slurm node, a machine
// without unprivileged overlays) or the settings ask for one (core/run/launch/worktree-view.ts): a copy-on-write
// clone where the filesystem has them, else a real copy. What the child changed is found by comparing the copy with
// the list of what was put there (its manifest) and the time it was finished: a file the child wrote, made, renamed
// or changed the mode of has a later change time (which no program can set back). The cost grows with the tree
// here, and the task says so. Read back without following links (names as bytes), like a layer (harvest.ts).
import * as fs from "node:fs";
import * as path from "node:path";
import { leftBehind, linkInside, type RuleOpts } from "../core/run/launch/harvest-rules.ts";
import { cpProgram, reflinkFlags } from "./cow-probe.ts";
import { lastLine, runProgram } from "./git-command.ts";
import { abs, type Harvest, join } from "./harvest.ts";

const MANIFEST = ".manifest";
const STARTED = ".started";

/** Copies `from` (a folder of the user's) into `to`, every entry but the ones named in `skip` (relative paths: git's
 *  folder, a data folder inside the tree) — clones with `clone`. Throws with cp's own words. */
export async function fillCopy(from: string, to: string, skip: string[], clone: boolean): Promise<void> {
  fs.mkdirSync(to, { recursive: true });
  const flags = clone ? reflinkFlags() : [];
  const copyDir = async (rel: string): Promise<void> => {
    for (const e of fs.readdirSync(path.join(from, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (skip.includes(r)) continue;
      // A folder on the way to one that is skipped: made here, its other entries copied.
      if (e.isDirectory() && skip.some((s) => s.startsWith(`${r}/`))) {
        fs.mkdirSync(path.join(to, r), { recursive: true });
        await copyDir(r);
        continue;
      }
      const c = await runProgram(cpProgram(), ["-a", ...flags, path.join(from, r), path.join(to, r)], { cwd: to });
      if (c.code !== 0)
        throw new Error(`could not copy ${r} for the task: ${lastLine(c.stderr) || `cp exit ${c.code}`}`);
    }
  };
  await copyDir("");
}

/** Copies these entries (relative paths) of `from` to the same places in `to`. */
export async function copyEntries(from: string, to: string, entries: string[]): Promise<void> {
  for (const e of entries) {
    fs.mkdirSync(path.dirname(path.join(to, e)), { recursive: true });
    const c = await runProgram(cpProgram(), ["-a", path.join(from, e), path.join(to, e)], { cwd: to });
    if (c.code !== 0) throw new Error(`could not copy ${e} for the task: ${lastLine(c.stderr) || `cp exit ${c.code}`}`);
  }
}

/** Bytes of the regular files under dir (what a copy of it costs). */
export function treeBytes(dir: string): number {
  let total = 0;
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) total += fs.lstatSync(p).size;
    }
  };
  try {
    walk(dir);
  } catch {
    // a folder we cannot read: counted as far as it goes
  }
  return total;
}

type Kind = "f" | "d" | "l";
const kindOf = (st: fs.Stats): Kind | null =>
  st.isFile() ? "f" : st.isDirectory() ? "d" : st.isSymbolicLink() ? "l" : null;

/** Every entry of the copy (but `.git` at the top), with its kind: written beside it, with the time it was done. */
export function writeManifest(copy: string, state: string): void {
  const out: Buffer[] = [];
  const queue: Buffer[] = [Buffer.alloc(0)];
  while (queue.length) {
    const rel = queue.shift() as Buffer;
    for (const name of fs.readdirSync(abs(copy, rel), { encoding: "buffer" }) as Buffer[]) {
      const p = join(rel, name);
      if (!rel.length && name.toString() === ".git") continue;
      const st = fs.lstatSync(abs(copy, p));
      const k = kindOf(st);
      if (!k) continue;
      out.push(Buffer.from(k), p, Buffer.from([0]));
      if (k === "d") queue.push(p);
    }
  }
  fs.mkdirSync(state, { recursive: true });
  fs.writeFileSync(path.join(state, MANIFEST), Buffer.concat(out));
  fs.writeFileSync(path.join(state, STARTED), "");
}

/** When the copy was finished (its manifest's mark), in nanoseconds of change time. */
export const copiedNs = (state: string) => fs.statSync(path.join(state, STARTED), { bigint: true }).ctimeNs;

/** What the child changed in its copy, against its manifest (names as bytes, never following a link); `seenAs` is
 *  the path the child saw the copy at (an absolute link into it stays inside). */
export function harvestCopy(copy: string, state: string, rules: RuleOpts, seenAs = copy): Harvest {
  const since = copiedNs(state);
  const before = new Map<string, Kind>();
  const raw = fs.readFileSync(path.join(state, MANIFEST));
  let start = 0;
  for (let i = 0; i < raw.length; i++)
    if (raw[i] === 0) {
      before.set(raw.subarray(start + 1, i).toString("latin1"), raw.toString("latin1", start, start + 1) as Kind);
      start = i + 1;
    }
  const h: Harvest = { files: [], links: [], dirs: [], gone: [], left: [], from: copy };
  const seen = new Set<string>();
  const queue: Buffer[] = [Buffer.alloc(0)];
  while (queue.length) {
    const rel = queue.shift() as Buffer;
    for (const name of fs.readdirSync(abs(copy, rel), { encoding: "buffer" }) as Buffer[]) {
      const p = join(rel, name);
      const key = p.toString("latin1");
      seen.add(key);
      const why = leftBehind(p, rules);
      if (why) {
        // Only what the child made or changed is named (`.git` at the top is its own private one).
        if (!before.has(key) && !(rel.length === 0 && name.toString() === ".git")) h.left.push({ path: p, why });
        continue;
      }
      const st = fs.lstatSync(abs(copy, p), { bigint: true });
      const k = kindOf(st as unknown as fs.Stats);
      const was = before.get(key);
      if (was && was !== k) h.gone.push({ path: p, dir: was === "d" });
      if (!k) {
        h.left.push({ path: p, why: "special" });
        continue;
      }
      if (k === "d") {
        if (was !== "d") h.dirs.push(p);
        queue.push(p);
        continue;
      }
      if (was === k && st.ctimeNs < since) continue;
      if (k === "f") h.files.push(p);
      else {
        const target = fs.readlinkSync(abs(copy, p), { encoding: "buffer" });
        if (linkInside(p, target, seenAs)) h.links.push({ path: p, target });
        else h.left.push({ path: p, why: "link-out" });
      }
    }
  }
  // Gone: what the manifest has and the copy has not, the outermost of each.
  const goneDirs: string[] = [];
  for (const [key, kind] of [...before].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (seen.has(key) || goneDirs.some((d) => key.startsWith(`${d}/`))) continue;
    const p = Buffer.from(key, "latin1");
    const why = leftBehind(p, rules);
    if (why) h.left.push({ path: p, why });
    else h.gone.push({ path: p, dir: kind === "d" });
    if (kind === "d") goneDirs.push(key);
  }
  return h;
}
