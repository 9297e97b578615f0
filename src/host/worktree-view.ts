// Makes an isolated task's view of its repository's ignored files (core/run/launch/worktree-view.ts says what each
// way means): which ignored folders there are and which `.worktreeinclude` entries apply, both asked of git itself
// (its own ignore rules, never a matcher of ours), then each folder made visible in the worktree — an overlay
// mount entered by the task's processes, a copy-on-write clone, or a copy — and the included files copied in.
// The user's tree is only read. What the task changes in those folders stays in the task: in its overlay layer
// (under the data folder, removed with the worktree) or in its own copy.
import * as fs from "node:fs";
import * as path from "node:path";
import {
  chooseMechanism,
  enterArgv,
  overlaySafePath,
  type NamespaceWay,
  type OverlayMount,
  type ViewMechanism,
  type ViewRequest,
  type WorktreeView,
} from "../core/run/launch/worktree-view.ts";
import { overlayWay, reflinkFlags, reflinkWorks } from "./cow-probe.ts";
import { git, lastLine, must, runProgram } from "./git-command.ts";
import { relocateVenvs } from "./venv-relocate.ts";

/** Python's byte-code caches: made again as needed, and one mount each would cost more than they save. */
const NOT_CARRIED = new Set(["__pycache__"]);

const split0 = (s: string) => s.split("\0").filter(Boolean);
const strip = (e: string) => e.replace(/\/$/, "");
const inside = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);

/** Of the given paths (relative to the top, folders with a trailing slash), those git's own rules really ignore. */
async function reallyIgnored(repo: string, paths: string[]): Promise<string[]> {
  if (!paths.length) return [];
  const r = await git(["check-ignore", "-z", "--stdin"], repo, {}, `${paths.join("\0")}\0`);
  // Exit 1: none of them is ignored.
  if (r.code !== 0 && r.code !== 1) throw new Error(`git check-ignore failed: ${lastLine(r.stderr)}`);
  return split0(r.stdout);
}

/** The outermost entries only: an entry inside another is already carried with it. */
function outermost(entries: string[]): string[] {
  const sorted = [...new Set(entries.map(strip))].sort();
  const out: string[] = [];
  for (const e of sorted) if (!out.some((o) => inside(e, o))) out.push(e);
  return out;
}

/** The repository's ignored folders (untracked, each one git collapses to a folder), never one holding our data. */
export async function ignoredFolders(repo: string, dataRoot: string): Promise<string[]> {
  const listedDirs = split0(
    await must(["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"], repo),
  ).filter((e) => e.endsWith("/"));
  const data = realOr(dataRoot);
  return outermost(await reallyIgnored(repo, listedDirs)).filter(
    (f) => !NOT_CARRIED.has(path.basename(f)) && !inside(data, path.join(repo, f)),
  );
}

/** What `.worktreeinclude` (gitignore syntax, at the top) names that is untracked and really ignored. */
export async function includedEntries(repo: string): Promise<string[]> {
  const file = path.join(repo, ".worktreeinclude");
  if (!fs.existsSync(file)) return [];
  const named = split0(
    await must(["ls-files", "-z", "--others", "--ignored", "--directory", `--exclude-from=${file}`], repo),
  );
  return outermost(await reallyIgnored(repo, named));
}

function realOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** Copies (or clones) one entry of the user's tree to the same place in the worktree. */
async function copyEntry(from: string, to: string, flags: string[] = []): Promise<string | null> {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  const isDir = fs.existsSync(to) && fs.statSync(to).isDirectory();
  const r = await runProgram("cp", ["-a", ...flags, isDir ? `${from}/.` : from, to], { cwd: path.dirname(to) });
  return r.code === 0 ? null : lastLine(r.stderr) || `cp exit ${r.code}`;
}

/** Bytes of the regular files under dir (what a copy of it costs). */
function treeBytes(dir: string): number {
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

/** Why this folder cannot be an overlay for this namespace, or null: copy-up needs its owner and group mapped. */
function overlayRefusal(folder: string, abs: string, way: NamespaceWay): string | null {
  if (!overlaySafePath(abs)) return `${folder}: its path has a character overlay mounts cannot take`;
  if (!way.userns) return null;
  const st = fs.statSync(abs);
  return st.uid === way.uid && st.gid === way.gid ? null : `${folder}: owned by another user or group`;
}

type Made = { mounts: OverlayMount[]; copied: string[]; notes: string[] };

/** Overlay mounts for the folders it can take; the others are copied (said in a note). */
async function overlayFolders(
  repo: string,
  wtPath: string,
  viewDir: string,
  folders: string[],
  way: NamespaceWay,
): Promise<Made> {
  const made: Made = { mounts: [], copied: [], notes: [] };
  for (const [i, folder] of folders.entries()) {
    const lower = path.join(repo, folder);
    const target = path.join(wtPath, folder);
    const refused = overlayRefusal(folder, lower, way) ?? (overlaySafePath(viewDir) ? null : "the data folder's path");
    if (refused) {
      const failed = await copyEntry(lower, target);
      if (failed) throw new Error(`could not copy ${folder} into the worktree: ${failed}`);
      made.copied.push(folder);
      made.notes.push(`${refused}: copied`);
      continue;
    }
    const upper = path.join(viewDir, "upper", String(i));
    const work = path.join(viewDir, "work", String(i));
    for (const d of [upper, work, target]) fs.mkdirSync(d, { recursive: true });
    made.mounts.push({ lower, upper, work, target });
  }
  return made;
}

/** Clones (reflink) or copies each folder into the worktree; a clone that fails becomes a copy (said in a note). */
async function materialize(repo: string, wtPath: string, folders: string[], clone: boolean): Promise<Made> {
  const made: Made = { mounts: [], copied: [], notes: [] };
  for (const folder of folders) {
    const from = path.join(repo, folder);
    const to = path.join(wtPath, folder);
    if (clone) {
      const failed = await copyEntry(from, to, reflinkFlags());
      if (!failed) continue;
      fs.rmSync(to, { recursive: true, force: true });
      made.notes.push(`${folder} could not be cloned (${failed}): copied`);
    }
    const failed = await copyEntry(from, to);
    if (failed) throw new Error(`could not copy ${folder} into the worktree: ${failed}`);
    made.copied.push(folder);
  }
  return made;
}

/** The task's view: folders made visible, included files copied; throws when the worktree cannot hold it. */
export async function makeView(opts: {
  repo: string;
  wtPath: string;
  viewDir: string;
  dataRoot: string;
  request: ViewRequest;
}): Promise<WorktreeView> {
  const { repo, wtPath, viewDir, dataRoot, request } = opts;
  const folders = request.deps === "off" ? [] : await ignoredFolders(repo, dataRoot);
  const wanted = folders.length > 0 && request.deps === "auto";
  const found = wanted && request.local ? await overlayWay(dataRoot) : null;
  const way = typeof found === "object" ? found : null;
  // A clone is the next best thing: asked only when there is no overlay for this task.
  const clones = wanted && !way ? (await reflinkWorks(await gitHead(repo), dataRoot)) === true : false;
  const mechanism: ViewMechanism | "none" = folders.length
    ? chooseMechanism(request, { overlay: !!way, reflink: clones })
    : "none";
  let made: Made = { mounts: [], copied: [], notes: [] };
  if (mechanism === "overlay" && way) made = await overlayFolders(repo, wtPath, viewDir, folders, way);
  else if (mechanism !== "none") made = await materialize(repo, wtPath, folders, mechanism === "reflink");
  // The user's absolute path in a virtual environment would lead the task's pip and python back to the user's copy.
  relocateVenvs(repo, wtPath, folders, (folder) => {
    const i = made.mounts.findIndex((m) => m.target === path.join(wtPath, folder));
    return i >= 0 ? made.mounts[i].upper : path.join(wtPath, folder);
  });
  const included: string[] = [];
  for (const entry of await includedEntries(repo)) {
    if (folders.some((f) => inside(entry, f))) continue;
    const failed = await copyEntry(path.join(repo, entry), path.join(wtPath, entry));
    if (failed) throw new Error(`could not copy ${entry} (.worktreeinclude) into the worktree: ${failed}`);
    included.push(entry);
  }
  // A venv named in .worktreeinclude (with worktreeDeps "off") is a copy in the worktree: it gets the same rewrite.
  relocateVenvs(repo, wtPath, included, (entry) => path.join(wtPath, entry));
  const view: WorktreeView = { mechanism, folders, included };
  if (made.mounts.length) {
    view.enter = enterArgv(way!, made.mounts);
    view.dir = viewDir;
  }
  if (made.copied.length) view.bytes = made.copied.reduce((n, f) => n + treeBytes(path.join(wtPath, f)), 0);
  const notes = made.notes;
  if (mechanism === "copy")
    notes.unshift(
      request.deps === "copy" ? 'subagents.worktreeDeps is "copy"' : "no copy-on-write here: see subagents doctor",
    );
  if (notes.length) view.note = notes.join("; ");
  return view;
}

/** A file of the repository's own filesystem that a reflink probe may read (never write). */
async function gitHead(repo: string): Promise<string> {
  const common = (await must(["rev-parse", "--path-format=absolute", "--git-common-dir"], repo)).trim();
  return path.join(common, "HEAD");
}
