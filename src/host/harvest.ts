// What a task changed, read back by its owner from the task's layer (task-layer.ts) or its copy (task-copy.ts): the
// regular files it wrote, the folders it made, the links it made, and what of the user's tree is gone from its view;
// with what stays behind and why (core/run/launch/harvest-rules.ts). The owner never follows a path the child
// controls: the layer is read with lstat and readdir only (names as bytes), a folder the rules leave behind is not
// entered, and a file's content is read later by its consumer with O_NOFOLLOW. The cost grows with what the task
// changed: only the layer is walked, plus the user's folders the task changed something in.
//
// overlayfs keeps what the user's tree lost in the layer as whiteouts (a character device 0/0) and as opaque
// folders (a folder removed and made again: an xattr Node cannot read). Which changed folders are opaque is asked
// of a read-only overlay of the same layers (task-layer.ts probeArgv): one entry of the user's folder that the layer
// does not name is looked up there; gone means the folder hides all of the user's entries.
import * as fs from "node:fs";
import * as path from "node:path";
import { BARE_MARKS, leftBehind, linkInside, type LeftWhy, type RuleOpts } from "../core/run/launch/harvest-rules.ts";
import type { NamespaceWay } from "../core/run/launch/worktree-view.ts";
import { runProgram } from "./git-command.ts";
import { type Layer, probeArgv, upperOf } from "./task-layer.ts";

export type Harvest = {
  /** Regular files the task wrote (their content is at the same relative path in `from`). */
  files: Buffer[];
  links: { path: Buffer; target: Buffer }[];
  /** Folders the task made where the user's tree has none. */
  dirs: Buffer[];
  /** What of the user's tree is gone from the task's view (a folder: with everything in it). */
  gone: { path: Buffer; dir: boolean }[];
  /** What stays behind (the outermost path of each). */
  left: { path: Buffer; why: LeftWhy }[];
  /** Where the changed files' content is: the layer's upper folder, or the task's copy. */
  from: string;
};

const SLASH = Buffer.from("/");
export const join = (a: Buffer, b: Buffer) => (a.length ? Buffer.concat([a, SLASH, b]) : b);
export const abs = (root: string, rel: Buffer) =>
  rel.length ? Buffer.concat([Buffer.from(`${root}/`), rel]) : Buffer.from(root);

function lstat(p: Buffer): fs.Stats | null {
  try {
    return fs.lstatSync(p, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

function names(dir: Buffer): Buffer[] {
  try {
    return fs.readdirSync(dir, { encoding: "buffer" }) as Buffer[];
  } catch {
    return [];
  }
}

const isWhiteout = (st: fs.Stats) => st.isCharacterDevice() && st.rdev === 0;

/** A folder of the layer over a folder of the user's: whether it hides the user's entries is asked of the probe. */
type Merged = { dir: Buffer; lowerOnly: { name: Buffer; dir: boolean }[] };

type Walk = Omit<Harvest, "from"> & { merged: Merged[] };

function newWalk(): Walk {
  return { files: [], links: [], dirs: [], gone: [], left: [], merged: [] };
}

/** Walks the layer's upper folder against the user's tree `root`: what changed, and the merged folders to probe. */
function walkLayer(upper: string, root: string, rules: RuleOpts, w: Walk = newWalk()): Walk {
  const queue: Buffer[] = [Buffer.alloc(0)];
  while (queue.length) {
    const rel = queue.shift() as Buffer;
    const inUpper = names(abs(upper, rel));
    for (const name of inUpper) {
      const p = join(rel, name);
      const st = lstat(abs(upper, p));
      if (!st) continue;
      const why = leftBehind(p, rules);
      if (why) {
        w.left.push({ path: p, why });
        continue;
      }
      const low = lstat(abs(root, p));
      if (isWhiteout(st)) {
        if (low) w.gone.push({ path: p, dir: low.isDirectory() });
        continue;
      }
      if (st.isDirectory()) {
        if (low?.isDirectory()) {
          const here = new Set(inUpperOf(upper, p).map((n) => n.toString("latin1")));
          const lowerOnly = names(abs(root, p))
            .filter((n) => !here.has(n.toString("latin1")))
            .map((n) => ({ name: n, dir: !!lstat(abs(root, join(p, n)))?.isDirectory() }));
          if (lowerOnly.length) w.merged.push({ dir: p, lowerOnly });
        } else {
          if (low) w.gone.push({ path: p, dir: false });
          w.dirs.push(p);
        }
        queue.push(p);
        continue;
      }
      if (low?.isDirectory()) w.gone.push({ path: p, dir: true });
      if (st.isFile()) w.files.push(p);
      else if (st.isSymbolicLink()) {
        const target = fs.readlinkSync(abs(upper, p), { encoding: "buffer" });
        if (linkInside(p, target, root)) w.links.push({ path: p, target });
        else w.left.push({ path: p, why: "link-out" });
      } else w.left.push({ path: p, why: "special" });
    }
  }
  return w;
}

const inUpperOf = (upper: string, rel: Buffer) => names(abs(upper, rel));

/** Runs the probe: which of `paths` exist in the task's view (and, asked, which of `ignoreAsk` git ignores there). */
async function probe(
  layer: Layer,
  way: NamespaceWay,
  paths: Buffer[],
  git?: { env: Record<string, string>; ask: Buffer[] },
): Promise<{ exists: boolean[]; ignored: Buffer[] }> {
  const { argv, view } = probeArgv(layer, way);
  const file = (n: string) => path.join(layer.dir, n);
  const nul = (list: Buffer[]) => Buffer.concat(list.flatMap((p) => [p, Buffer.from([0])]));
  fs.writeFileSync(file("probe.in"), nul(paths));
  if (git) fs.writeFileSync(file("ignore.in"), nul(git.ask));
  for (const f of ["probe.out", "ignore.out"]) fs.rmSync(file(f), { force: true });
  const script = [
    'cd "$1" || exit 3',
    // One character per path, in order: 1 there (a link too), 0 gone.
    `xargs -0 -r sh -c 'for p do if [ -e "$p" ] || [ -L "$p" ]; then printf 1; else printf 0; fi; done' sh < "$2" > "$3" || exit 4`,
    '[ -z "$4" ] && exit 0',
    'git -c core.fsmonitor=false check-ignore -z --stdin < "$4" > "$5"; rc=$?',
    '[ "$rc" -le 1 ]',
  ].join("\n");
  const r = await runProgram(
    argv[0],
    [
      ...argv.slice(1),
      "/bin/sh",
      "-c",
      script,
      "harvest",
      view,
      file("probe.in"),
      file("probe.out"),
      git ? file("ignore.in") : "",
      file("ignore.out"),
    ],
    { cwd: layer.dir, env: git ? { ...git.env, GIT_WORK_TREE: view } : {}, timeoutMs: 120_000 },
  );
  if (r.code !== 0) throw new Error(`could not read the task's layer (exit ${r.code}): ${r.stderr.trim().slice(-300)}`);
  const out = fs.readFileSync(file("probe.out"), "latin1");
  const ignored = git
    ? fs
        .readFileSync(file("ignore.out"))
        .toString("latin1")
        .split("\0")
        .filter(Boolean)
        .map((s) => Buffer.from(s, "latin1"))
    : [];
  return { exists: [...out].map((c) => c === "1"), ignored };
}

/** A folder the task turned into one git takes for a repository's own (HEAD, objects/, refs/): all of it stays. */
function bareFolders(w: Walk, root: string, upper: string): Set<string> {
  const touched = new Set<string>();
  const marks = new Set<string>(BARE_MARKS);
  for (const p of [...w.files, ...w.dirs, ...w.links.map((l) => l.path)]) {
    const i = p.lastIndexOf(0x2f);
    if (marks.has(p.subarray(i + 1).toString("latin1"))) touched.add(p.subarray(0, Math.max(0, i)).toString("latin1"));
  }
  const gone = new Set(w.gone.map((g) => g.path.toString("latin1")));
  const bare = new Set<string>();
  for (const d of touched) {
    const dir = Buffer.from(d, "latin1");
    const has = (m: string) => {
      const p = join(dir, Buffer.from(m));
      const up = lstat(abs(upper, p));
      if (up) return !isWhiteout(up);
      return !!lstat(abs(root, p)) && !gone.has(p.toString("latin1"));
    };
    if (BARE_MARKS.every(has)) bare.add(d);
  }
  return bare;
}

const under = (p: Buffer, dir: string) => {
  const s = p.toString("latin1");
  return dir === "" || s === dir || s.startsWith(`${dir}/`);
};

/** Moves what lies in a bare-looking folder to what stays behind. */
function leaveBare(w: Walk, bare: Set<string>): void {
  if (!bare.size) return;
  const keep = <T>(list: T[], at: (t: T) => Buffer) => list.filter((t) => ![...bare].some((d) => under(at(t), d)));
  w.files = keep(w.files, (p) => p);
  w.dirs = keep(w.dirs, (p) => p);
  w.links = keep(w.links, (l) => l.path);
  w.gone = keep(w.gone, (g) => g.path);
  for (const d of bare) w.left.push({ path: Buffer.from(d, "latin1"), why: "git" });
}

/**
 * What the task changed in its layer over `root`. With `git` (an isolated task), also which changed paths git
 * ignores in the task's view (its own .gitignore files as it left them): `ignored`.
 */
export async function harvestLayer(
  layer: Layer,
  way: NamespaceWay,
  rules: RuleOpts,
  git?: { env: Record<string, string> },
): Promise<Harvest & { ignored: Set<string> }> {
  const upper = upperOf(layer);
  const w = walkLayer(upper, layer.root, rules);
  const ask = git ? [...w.files, ...w.links.map((l) => l.path)] : [];
  const needProbe = w.merged.length > 0 || ask.length > 0;
  const answer = needProbe
    ? await probe(
        layer,
        way,
        w.merged.map((m) => join(m.dir, m.lowerOnly[0].name)),
        git ? { env: git.env, ask } : undefined,
      )
    : { exists: [], ignored: [] };
  // A merged folder whose first lower-only entry is gone from the view is opaque: all of them are gone.
  for (const [i, m] of w.merged.entries()) {
    if (answer.exists[i]) continue;
    for (const e of m.lowerOnly) {
      const p = join(m.dir, e.name);
      const why = leftBehind(p, rules);
      if (why) w.left.push({ path: p, why });
      else w.gone.push({ path: p, dir: e.dir });
    }
  }
  leaveBare(w, bareFolders(w, layer.root, upper));
  const { merged: _, ...h } = w;
  return { ...h, from: upper, ignored: new Set(answer.ignored.map((b) => b.toString("latin1"))) };
}
