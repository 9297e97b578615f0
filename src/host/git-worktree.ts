// The git side of an isolated task (core/run/launch/isolation.ts has the shapes, docs/composing.md "Isolation" the
// user's view). The task starts from what the user sees — HEAD plus uncommitted and untracked changes, captured in
// a temporary index (GIT_INDEX_FILE), so the user's tree and index are only read — and sees the repository one of
// two ways (core/run/launch/worktree-view.ts):
//  - a layer over the repository at its own path (task-layer.ts), with the layer's git folder pinned to that start:
//    HEAD detached at it, the index its own. Every file of the user's — ignored ones too — is there as it is; what
//    the child writes, its commits and refs included, lands in the layer;
//  - its own copy (task-copy.ts), where the child cannot enter our namespace, with a private git folder that borrows
//    the repository's objects (alternates) and has its refs as they were.
// When the task ends its owner commits what it changed (harvest.ts) on that start, on a branch of its own
// (harvest-branch.ts) — never the child's commits or refs — and removes the layer or copy. No `git worktree` is made:
// nothing is added to the user's git folder but the branch and its objects.
// Each task has a small owner record next to its layer (`<id>.json`: pid + kernel start time, like
// control/registry.ts, and how far the task's tree got), written before anything else of it exists, so a task whose
// owner was SIGKILLed at any moment is finished by the next run or `subagents prune`: what its child changed kept on
// a branch; a tree still being made, or whose setup command had not ended, removed with nothing kept — its content
// is nobody's work.
import * as fs from "node:fs";
import * as path from "node:path";
import { leftWarnings, shown, type RuleOpts } from "../core/run/launch/harvest-rules.ts";
import {
  branchName,
  type ChangedFile,
  type IsolationRecords,
  type IsolationResult,
  type StaleWorktree,
  type Worktree,
  type WorktreeHost,
  type WorktreeMade,
  type WorktreeRequest,
} from "../core/run/launch/isolation.ts";
import {
  chooseMechanism,
  type NamespaceWay,
  overlaySafePath,
  viewRecord,
  type WorktreeView,
} from "../core/run/launch/worktree-view.ts";
import { listed } from "../core/string-list.ts";
import { pidAlive, procStartTime, recordAlive } from "./process-identity.ts";
import { writeFileAtomic } from "./atomic-write.ts";
import { endOrphans } from "./orphans.ts";
import { git, lastLine, must, NO_HOOKS, runBytes } from "./git-command.ts";
import { ignoredFolders, includedEntries, includedNotIgnored, realOr } from "./worktree-view.ts";
import { GONE, overlayWay, PROBE_PREFIX, reflinkWorks, removeLater, removeTree } from "./cow-probe.ts";
import { layerPathOf, makeLayer, startedNs } from "./task-layer.ts";
import { applyHarvest, inPlaceWarnings } from "./harvest-apply.ts";
import { type Harvest, harvestLayer } from "./harvest.ts";
import { commitHarvest } from "./harvest-branch.ts";
import {
  copiedNs as copyStartedNs,
  copyEntries,
  fillCopy,
  harvestCopy,
  treeBytes,
  writeManifest,
} from "./task-copy.ts";
import { relocateVenvs } from "./venv-relocate.ts";

/** How far a task's tree got: `making` (the base snapshot, its layer or copy), `setup` (a setup command changing it),
 *  `ready` (whole: from here on what changes in it is the task child's work). Records of an older version have
 *  none: taken as ready, as that version did. */
type Phase = "making" | "setup" | "ready";
type OwnerFile = Worktree & { pid: number; startTime: string | null; createdAt: number; phase?: Phase };
/** A dead owner's record as found: the file it is in (a clean-up killed after claiming it left it renamed). */
type Found = OwnerFile & { file: string };

/** A temporary index of a snapshot whose process left no record (an older version's): removed once this old. */
const ORPHAN_INDEX_MS = 10 * 60_000;

/** When the user has no git identity (a fresh machine, a CI box), commits are made as "subagents". */
const FALLBACK_IDENTITY = {
  GIT_AUTHOR_NAME: "subagents",
  GIT_AUTHOR_EMAIL: "subagents@localhost",
  GIT_COMMITTER_NAME: "subagents",
  GIT_COMMITTER_EMAIL: "subagents@localhost",
};

/** The identity env to commit with: none when the repository has one configured. */
async function identity(cwd: string): Promise<Record<string, string>> {
  return (await git(["var", "GIT_COMMITTER_IDENT"], cwd)).code === 0 &&
    (await git(["var", "GIT_AUTHOR_IDENT"], cwd)).code === 0
    ? {}
    : FALLBACK_IDENTITY;
}

/** `git diff --numstat -z` → changed files (binary files count null). */
function parseNumstat(out: string): ChangedFile[] {
  const files: ChangedFile[] = [];
  for (const rec of out.split("\0")) {
    const m = /^(\d+|-)\t(\d+|-)\t(.+)$/s.exec(rec.replace(/^\n/, ""));
    if (m)
      files.push({
        path: m[3],
        added: m[1] === "-" ? null : Number(m[1]),
        deleted: m[2] === "-" ? null : Number(m[2]),
      });
  }
  return files;
}

const inside = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
const nul = (list: string[]) => `${list.join("\0")}\0`;

/** `records`: the store, told each run's isolation from the moment its tree exists (create) to its end. */
export function createWorktreeHost(dataDir: string, records?: IsolationRecords): WorktreeHost {
  const root = path.join(dataDir, "worktrees");
  const recordFile = (id: string) => path.join(root, `${id}.json`);
  /** The task's own files beside its record: its base index, a scratch index, a copy's manifest. */
  const stateDir = (id: string) => path.join(root, `${id}.state`);
  let staleChecked: Promise<unknown> | null = null;
  /** The phase of each task's tree this process made (its record says the same). */
  const phases = new Map<string, Phase>();

  async function locate(cwd: string): Promise<string | null> {
    const r = await git(["rev-parse", "--show-toplevel"], cwd);
    if (r.code === 127) throw new Error(`git could not be run (${r.stderr.trim() || "not on PATH"})`);
    return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : null;
  }

  /** The user's current state as a commit (HEAD when the tree is clean, else a snapshot commit on top of it) and
   *  its index, written to `index` (a copy of the real one first, so its stat data stay and `add -A` hashes only what
   *  changed). Untracked files `.worktreeinclude` names that git does not ignore stay out of it (`left`). */
  async function snapshot(
    repo: string,
    index: string,
    who: Record<string, string>,
  ): Promise<{ base: string; left: string[] }> {
    const head = (await git(["rev-parse", "--verify", "-q", "HEAD"], repo)).stdout.trim();
    const realIndex = (await must(["rev-parse", "--path-format=absolute", "--git-path", "index"], repo)).trim();
    if (fs.existsSync(realIndex)) fs.copyFileSync(realIndex, index);
    else fs.rmSync(index, { force: true });
    const env = { GIT_INDEX_FILE: index };
    const left = await includedNotIgnored(repo);
    await must(["add", "-A"], repo, env);
    if (left.length) {
      const r = await git(["update-index", "-z", "--force-remove", "--stdin"], repo, env, nul(left));
      if (r.code !== 0)
        throw new Error(`could not keep ${listed(left)} out of the task's snapshot: ${lastLine(r.stderr)}`);
    }
    const tree = (await must(["write-tree"], repo, env)).trim();
    if (head && (await must(["rev-parse", `${head}^{tree}`], repo)).trim() === tree) return { base: head, left };
    const parent = head ? ["-p", head] : [];
    const message = "subagents: snapshot of uncommitted changes (base of an isolated task)";
    return { base: (await must(["commit-tree", tree, ...parent, "-m", message], repo, who)).trim(), left };
  }

  /** Written whole or not at all (a kill mid-write leaves the previous record, never half of one). */
  const saveRecord = (wt: Worktree, phase: Phase) => {
    phases.set(wt.id, phase);
    writeFileAtomic(
      recordFile(wt.id),
      JSON.stringify({ ...wt, pid: process.pid, startTime: procStartTime(process.pid), createdAt: Date.now(), phase }),
      { mode: 0o600, dirMode: 0o700 },
    );
  };
  /** Where the task's work is kept until it is harvested: its layer, or its copy. */
  const keptAt = (wt: Worktree) => wt.made?.layer?.dir ?? wt.made?.copy ?? wt.path;
  /** The run's record learns what became of its task's tree. A store that cannot take it (a full disk) fails nothing
   *  here: the run's end, recorded after, says why it could not be written. */
  const tell = (wt: Worktree, iso: IsolationResult) => {
    if (!records || wt.runId === undefined) return;
    try {
      records.setRunIsolation(wt.runId, iso);
    } catch {
      // said by the run's end
    }
  };

  /** Why this repository cannot have a layer here, or null. */
  function layerRefusal(repo: string, gitDirs: string[]): string | null {
    if (![repo, root, ...gitDirs].every(overlaySafePath)) return "a path has a character overlay mounts cannot take";
    if (inside(realOr(root), repo))
      return "pi's agent folder, where the task's layer is kept, is inside the repository";
    return null;
  }

  async function create(opts: WorktreeRequest): Promise<Worktree> {
    // A task a dead owner left behind (maybe this very session's) goes first.
    await (staleChecked ??= cleanStale());
    if (fs.existsSync(recordFile(opts.id))) await cleanStale();
    const found = await locate(opts.cwd);
    if (!found) throw new Error(`${opts.cwd} is not inside a git repository`);
    const repo = realOr(found);
    const prefix = (await must(["rev-parse", "--show-prefix"], opts.cwd)).trim().replace(/\/$/, "");
    const [gitDir, commonDir] = (
      await must(["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"], repo)
    )
      .trim()
      .split("\n")
      .map(realOr);
    fs.mkdirSync(root, { recursive: true, mode: 0o700 });
    const state = stateDir(opts.id);
    fs.mkdirSync(state, { recursive: true, mode: 0o700 });
    const who = await identity(repo);
    const baseIndex = path.join(state, "base.index");
    const request = opts.view ?? { deps: "auto", local: true };
    const made: WorktreeMade = {
      gitDir,
      confined: opts.confined,
      // Absolute paths (task-isolate.ts resolves them), as paths of the repository.
      open: (opts.open ?? []).map((o) => path.relative(repo, o)).filter((o) => !o.startsWith("..")),
    };
    const wt: Worktree = {
      id: opts.id,
      path: repo,
      cwd: prefix ? path.join(repo, prefix) : repo,
      base: "",
      repo,
      name: opts.name,
      made,
      ...(opts.runId !== undefined ? { runId: opts.runId } : {}),
    };
    // The record comes before anything of the task's tree, so nothing can exist that a clean-up would not find; until
    // it says `ready`, a clean-up removes what it finds and keeps nothing.
    saveRecord(wt, "making");
    try {
      const snap = await snapshot(repo, baseIndex, who);
      wt.base = snap.base;
      saveRecord(wt, "making");
      const outside = [gitDir, commonDir].filter((d) => !inside(d, repo));
      const gitDirs = outside.filter((d) => !outside.some((o) => o !== d && inside(d, o)));
      const way = request.deps === "auto" && request.local ? await overlayWay(root) : null;
      const refused = typeof way === "object" && way ? layerRefusal(repo, gitDirs) : null;
      const included = await includedEntries(repo);
      if (way && typeof way === "object" && !refused) {
        wt.view = layerView(wt, way, gitDirs, baseIndex, included);
      } else {
        const why = refused ?? (typeof way === "string" ? way : undefined);
        // A repository holding pi's agent folder is a home folder under git: a copy of all of it could be anything,
        // so the task gets what git tracks and what .worktreeinclude names.
        const holdsData = inside(realOr(root), repo);
        wt.view = await copyView(
          wt,
          holdsData ? { ...request, deps: "off" } : request,
          baseIndex,
          included,
          why,
          commonDir,
        );
        wt.path = wt.view.root;
        wt.cwd = prefix ? path.join(wt.path, prefix) : wt.path;
        // The task's folder may hold only ignored or no files, so the copy has none.
        fs.mkdirSync(wt.cwd, { recursive: true });
      }
      if (snap.left.length) {
        const note = `${listed(snap.left)} named in .worktreeinclude but not ignored by git: left out of the task's snapshot and branch (add it to .gitignore)`;
        wt.view.note = wt.view.note ? `${wt.view.note}; ${note}` : note;
      }
      // The run's record knows where the task's work is kept before its child starts: `apply`, `session` and prune
      // can name it.
      tell(wt, { base: wt.base, repo, files: [], diffstat: "", worktree: keptAt(wt) });
      saveRecord(wt, "ready");
    } catch (err) {
      await discard(wt);
      throw err;
    }
    return wt;
  }

  /** A tree that holds no work of the task (still being made, its setup unfinished): removed, nothing kept. */
  async function discard(wt: Worktree): Promise<IsolationResult> {
    const result: IsolationResult = { base: wt.base, repo: wt.repo, files: [], diffstat: "" };
    if (wt.made) removeMade(wt);
    else await legacyRemove(wt);
    if (wt.base) tell(wt, result);
    fs.rmSync(recordFile(wt.id), { force: true });
    phases.delete(wt.id);
    return result;
  }

  /** The layer over the repository, its git folder pinned to the task's start. */
  function layerView(
    wt: Worktree,
    way: NamespaceWay,
    gitDirs: string[],
    baseIndex: string,
    included: string[],
  ): WorktreeView {
    const layer = { dir: path.join(root, `${wt.id}.layer`), root: wt.repo, gitDirs };
    wt.made = { ...wt.made!, layer, way };
    saveRecord(wt, "making");
    const enter = makeLayer(layer, way);
    pin(wt, baseIndex);
    return { mechanism: "overlay", root: wt.repo, layer: layer.dir, enter, included };
  }

  /** The layer's (or copy's) git folder: HEAD detached at the base, the base's index. */
  function pin(wt: Worktree, index: string): void {
    const m = wt.made!;
    const at = (f: string) => (m.layer ? layerPathOf(m.layer, path.join(m.gitDir, f)) : path.join(m.copy!, ".git", f));
    fs.mkdirSync(path.dirname(at("HEAD")), { recursive: true });
    fs.writeFileSync(at("HEAD"), `${wt.base}\n`);
    fs.copyFileSync(index, at("index"));
  }

  /** The task's own copy: a clone or copy of the tree (what git tracks only with worktreeDeps "off"), a private git
   *  folder borrowing the repository's objects, virtual environments naming the copy. */
  async function copyView(
    wt: Worktree,
    request: { deps: "auto" | "copy" | "off"; local: boolean },
    baseIndex: string,
    included: string[],
    why: string | undefined,
    commonDir: string,
  ): Promise<WorktreeView> {
    const copy = path.join(root, wt.id);
    wt.made = { ...wt.made!, copy };
    saveRecord(wt, "making");
    const clones = request.deps === "auto" && (await reflinkWorks(path.join(commonDir, "HEAD"), root)) === true;
    const mechanism = chooseMechanism(request, { overlay: false, reflink: clones });
    fs.mkdirSync(copy, { recursive: true });
    const data = realOr(root);
    if (mechanism === "none") {
      await must(["checkout-index", "-a", "-f", `--prefix=${copy}/`], wt.repo, { GIT_INDEX_FILE: baseIndex });
      await copyEntries(wt.repo, copy, included);
    } else {
      const skip = [".git", ...(inside(data, wt.repo) ? [path.relative(wt.repo, data)] : [])];
      await fillCopy(wt.repo, copy, skip, mechanism === "reflink");
    }
    await privateGit(wt, copy, commonDir, baseIndex);
    if (mechanism !== "none") relocateVenvs(wt.repo, copy, await ignoredFolders(wt.repo, root));
    writeManifest(copy, stateDir(wt.id));
    const note =
      request.deps === "copy"
        ? 'subagents.worktreeDeps is "copy"'
        : request.deps === "off"
          ? `${why ?? 'subagents.worktreeDeps is "off"'}: what git tracks and what .worktreeinclude names`
          : `${request.local ? (why ?? "no overlay here") : "its child is not a process of this machine"}: see subagents doctor`;
    return {
      mechanism,
      root: copy,
      copy,
      included,
      note,
      ...(mechanism === "copy" ? { bytes: treeBytes(copy) } : {}),
    };
  }

  /** A git folder of the copy's own: the repository's objects borrowed (read only), its refs as they were, HEAD
   *  detached at the base, the base's index. Nothing the child's git writes reaches the user's. */
  async function privateGit(
    wt: Worktree,
    copy: string,
    commonDir: string,
    baseIndex: string,
    asTheUsers = false,
  ): Promise<void> {
    await must(["init", "-q", "--template=", copy], copy);
    const gd = path.join(copy, ".git");
    wt.made = { ...wt.made!, objects: path.join(commonDir, "objects") };
    fs.writeFileSync(path.join(gd, "objects", "info", "alternates"), `${wt.made.objects}\n`);
    const refs = await must(["for-each-ref", "--format=%(objectname) %(refname)"], wt.repo);
    fs.writeFileSync(path.join(gd, "packed-refs"), `# pack-refs with: peeled fully-peeled sorted \n${refs}`);
    if (!asTheUsers) return pin(wt, baseIndex);
    // In place: the user's branch and index as they are (the child's commits stay in the copy).
    const head = await git(["symbolic-ref", "-q", "HEAD"], wt.repo);
    const at = head.code === 0 ? `ref: ${head.stdout.trim()}` : (await must(["rev-parse", "HEAD"], wt.repo)).trim();
    fs.writeFileSync(path.join(gd, "HEAD"), `${at}\n`);
    if (fs.existsSync(baseIndex)) fs.copyFileSync(baseIndex, path.join(gd, "index"));
  }

  /** Removes what was made for the task: its layer or copy, its state, its record. Never the user's tree. */
  function removeMade(wt: Worktree): void {
    const m = wt.made;
    for (const d of [m?.layer?.dir, m?.copy, stateDir(wt.id)]) if (d && inside(d, root) && d !== root) removeLater(d);
    fs.rmSync(recordFile(wt.id), { force: true });
  }

  /** What the task changed, read from its layer or its copy; and which of those paths git ignores there. */
  async function harvest(wt: Worktree, rules: RuleOpts): Promise<{ h: Harvest; ignored: Set<string> }> {
    const m = wt.made!;
    const env = { GIT_DIR: m.gitDir, GIT_INDEX_FILE: path.join(stateDir(wt.id), "base.index") };
    // In place: everything comes back (nothing git ignores is special there), so git is not asked.
    const git = m.inPlace ? undefined : { env };
    if (m.layer && m.way) return harvestLayer(m.layer, m.way, rules, git).then((r) => ({ h: r, ignored: r.ignored }));
    const h = harvestCopy(m.copy!, stateDir(wt.id), rules, m.inPlace ? wt.repo : m.copy);
    if (m.inPlace) return { h, ignored: new Set() };
    const ask = [...h.files, ...h.links.map((l) => l.path)];
    const r = ask.length
      ? await runBytes("git", ["-c", "core.fsmonitor=false", "check-ignore", "-z", "--stdin"], {
          cwd: m.copy!,
          env: { ...env, GIT_WORK_TREE: m.copy! },
          input: Buffer.concat(ask.flatMap((p) => [p, Buffer.from([0])])),
        })
      : null;
    if (r && r.code > 1) throw new Error(`git check-ignore failed: ${r.stderr.toString().trim()}`);
    const ignored = new Set((r?.stdout.toString("latin1") ?? "").split("\0").filter(Boolean));
    return { h, ignored };
  }

  /** Commits what the task changed on `wt.base`; the commit (null: nothing changed), its index, what stayed. */
  async function commitChanges(wt: Worktree, message: string) {
    const m = wt.made!;
    const rules: RuleOpts = { protect: !!m.confined, open: m.open };
    const { h, ignored } = await harvest(wt, rules);
    const include = path.join(wt.repo, ".worktreeinclude");
    const c = await commitHarvest(
      {
        repo: wt.repo,
        gitDir: m.gitDir,
        baseIndex: path.join(stateDir(wt.id), "base.index"),
        base: wt.base,
        index: path.join(stateDir(wt.id), "next.index"),
        message,
        who: await identity(wt.repo),
        include: fs.existsSync(include) ? include : undefined,
      },
      h,
      ignored,
    );
    // The top `.git` of an isolated task holds its own commits: expected, not worth a warning.
    const left = h.left.filter((l) => !(l.why === "git" && shown(l.path) === ".git"));
    return {
      ...c,
      left: leftWarnings(
        left.map((l) => ({ path: shown(l.path), why: l.why })),
        "isolation",
        (n) => listed(n, 5),
      ),
    };
  }

  /**
   * A confined task's layer over the user's own folder (not isolated): the repository holding it, at its own path
   * (so git works inside), else the folder itself; a copy of the folder where its child cannot enter our namespace,
   * shown to it at the folder's path. When the task ends its owner writes back what it changed (applyInPlace).
   */
  async function layerInPlace(opts: WorktreeRequest & { local: boolean }): Promise<Worktree> {
    await (staleChecked ??= cleanStale());
    if (fs.existsSync(recordFile(opts.id))) await cleanStale();
    const cwd = realOr(opts.cwd);
    const top = await locate(cwd).catch(() => null);
    const repo = top && !inside(realOr(root), realOr(top)) ? realOr(top) : null;
    fs.mkdirSync(root, { recursive: true, mode: 0o700 });
    fs.mkdirSync(stateDir(opts.id), { recursive: true, mode: 0o700 });
    const way = opts.local ? await overlayWay(root) : "its child is not a process of this machine";
    const dirs = repo
      ? (await git(["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"], repo)).stdout
          .trim()
          .split("\n")
          .filter(Boolean)
          .map(realOr)
      : [];
    const layerRoot = repo ?? cwd;
    const outside = dirs.filter((d) => !inside(d, layerRoot));
    const gitDirs = outside.filter((d) => !outside.some((o) => o !== d && inside(d, o)));
    const useLayer = typeof way === "object" && !layerRefusal(layerRoot, gitDirs) && !inside(realOr(root), layerRoot);
    const seen = useLayer ? layerRoot : cwd;
    const made: WorktreeMade = {
      gitDir: dirs[0] ?? "",
      confined: true,
      inPlace: { scope: path.relative(seen, cwd) },
      open: (opts.open ?? []).map((o) => path.relative(seen, o)).filter((o) => !o.startsWith("..")),
      hooks: repo ? await hookFolders(repo, seen) : [],
    };
    const wt: Worktree = {
      id: opts.id,
      path: seen,
      cwd,
      base: "",
      repo: seen,
      name: opts.name,
      made,
      ...(opts.runId !== undefined ? { runId: opts.runId } : {}),
    };
    saveRecord(wt, "making");
    try {
      if (useLayer && typeof way === "object") {
        const layer = { dir: path.join(root, `${wt.id}.layer`), root: seen, gitDirs };
        wt.made = { ...made, layer, way };
        saveRecord(wt, "making");
        wt.view = { mechanism: "overlay", root: seen, layer: layer.dir, enter: makeLayer(layer, way), included: [] };
      } else {
        const copy = path.join(root, wt.id);
        wt.made = { ...made, copy };
        saveRecord(wt, "making");
        const clones = (await reflinkWorks(cwd, root)) === true;
        await fillCopy(
          cwd,
          copy,
          [".git", ...(inside(realOr(root), cwd) ? [path.relative(cwd, realOr(root))] : [])],
          clones,
        );
        if (repo === cwd && dirs[0])
          await privateGit(wt, copy, dirs.at(-1) ?? dirs[0], path.join(dirs[0], "index"), true);
        writeManifest(copy, stateDir(wt.id));
        const why = typeof way === "string" ? way : "no overlay for this folder";
        wt.view = {
          mechanism: clones ? "reflink" : "copy",
          root: seen,
          copy,
          included: [],
          note: `${why}: see subagents doctor`,
          ...(clones ? {} : { bytes: treeBytes(copy) }),
        };
      }
      tell(wt, { base: "", repo: seen, files: [], diffstat: "", worktree: keptAt(wt) });
      saveRecord(wt, "ready");
    } catch (err) {
      await discard(wt);
      throw err;
    }
    return wt;
  }

  /** The folders git runs hooks from that lie inside `top` (core.hooksPath of the repository's and the user's
   *  config), relative to it: what is written there stays behind. */
  async function hookFolders(repo: string, top: string): Promise<string[]> {
    const r = await git(["config", "--get-all", "core.hooksPath"], repo);
    return r.stdout
      .split("\n")
      .filter(Boolean)
      .map((h) => path.resolve(repo, h.replace(/^~(?=\/)/, process.env.HOME ?? "~")))
      .filter((h) => inside(h, top))
      .map((h) => path.relative(top, h));
  }

  /** Writes what a confined task changed into the user's folder (harvest-apply.ts) and says what it did not. */
  async function applyInPlace(wt: Worktree): Promise<IsolationResult> {
    const m = wt.made!;
    const out: IsolationResult = { base: "", repo: wt.repo, files: [], diffstat: "" };
    const rules: RuleOpts = { protect: true, open: m.open, hooks: m.hooks, scope: m.inPlace?.scope };
    const keep = path.join(dataDir, "conflicts", wt.id);
    try {
      const { h } = await harvest(wt, rules);
      const since = m.layer ? startedNs(m.layer) : copyStartedNs(stateDir(wt.id));
      const target = m.layer ? wt.repo : realOr(wt.cwd);
      const a = applyHarvest(h, { root: target, since, keep, rules });
      out.files = [...h.files, ...h.links.map((l) => l.path)].map((p) => ({
        path: shown(p),
        added: null,
        deleted: null,
      }));
      out.left = inPlaceWarnings(h, a);
    } catch (err) {
      return {
        ...out,
        worktree: keptAt(wt),
        error: `changes not taken back, kept at ${keptAt(wt)}: ${(err as Error).message}`,
      };
    }
    tell(wt, { ...out });
    removeMade(wt);
    phases.delete(wt.id);
    return out;
  }

  /** A branch name not taken yet: `subagents/<slug>-<id>`, then `-2`, `-3`, … for later runs of a session — or the
   *  one of these that already holds `head`, or the same content on the same base (a finish cut short after making
   *  it: the next one does not make two). */
  async function freeBranch(wt: Worktree, head: string): Promise<{ name: string; made: boolean }> {
    const same = async (at: string) => {
      if (at === head) return true;
      const r = await git(["rev-parse", `${at}^{tree}`, `${head}^{tree}`, `${at}^1`, `${head}^1`], wt.repo);
      const [t1, t2, p1, p2] = r.stdout.trim().split("\n");
      return r.code === 0 && t1 === t2 && p1 === p2;
    };
    for (let n = 1; ; n++) {
      const name = branchName(wt.name, wt.id, n);
      const at = await git(["rev-parse", "--verify", "-q", `refs/heads/${name}`], wt.repo);
      if (at.code !== 0) return { name, made: false };
      if (await same(at.stdout.trim())) return { name, made: true };
    }
  }

  function settingUp(wt: Worktree): void {
    saveRecord(wt, "setup");
  }

  /** A setup command's changes to what git tracks become part of the base: the branch holds the child's work only. */
  async function seal(wt: Worktree): Promise<string[]> {
    const c = await commitChanges(wt, "subagents: setup (base of an isolated task)");
    if (!c.commit) {
      saveRecord(wt, "ready");
      return [];
    }
    const files = (await must(["diff", "--name-only", "-z", "--no-renames", wt.base, c.commit], wt.repo))
      .split("\0")
      .filter(Boolean);
    wt.base = c.commit;
    fs.copyFileSync(c.index, path.join(stateDir(wt.id), "base.index"));
    pin(wt, c.index);
    saveRecord(wt, "ready");
    tell(wt, { base: wt.base, repo: wt.repo, files: [], diffstat: "", worktree: keptAt(wt) });
    return files;
  }

  async function finish(wt: Worktree): Promise<IsolationResult> {
    const phase = phases.get(wt.id) ?? "ready";
    const result = phase === "ready" ? await keepAndRemove(wt) : await discard(wt);
    if (wt.view) result.view = viewRecord(wt.view);
    return result;
  }

  async function keepAndRemove(wt: Worktree): Promise<IsolationResult> {
    const out: IsolationResult = { base: wt.base, repo: wt.repo, files: [], diffstat: "" };
    if (!wt.made) return legacyFinish(wt);
    if (wt.made.inPlace) return applyInPlace(wt);
    try {
      const c = await commitChanges(wt, `subagents: ${wt.name}`);
      if (c.left.length) out.left = c.left;
      if (c.commit) {
        out.files = parseNumstat(await must(["diff", "--numstat", "-z", "--no-renames", wt.base, c.commit], wt.repo));
        out.diffstat = (await must(["diff", "--shortstat", wt.base, c.commit], wt.repo)).trim();
        const branch = await freeBranch(wt, c.commit);
        out.branch = branch.name;
        if (!branch.made) await must(["update-ref", `refs/heads/${branch.name}`, c.commit, ""], wt.repo);
      }
    } catch (err) {
      // The layer or copy stays (with its record) so nothing is lost; prune or the next run tries again.
      return {
        ...out,
        worktree: keptAt(wt),
        error: `changes not saved, kept at ${keptAt(wt)}: ${(err as Error).message}`,
      };
    }
    // The record learns the branch before the layer goes: a kill from here on leaves no branch it does not name.
    tell(wt, { ...out });
    removeMade(wt);
    phases.delete(wt.id);
    return out;
  }

  /** A worktree an older version made with `git worktree add` (its owner died before it could finish it): what its
   *  child changed kept on a branch, then removed. */
  async function legacyFinish(wt: Worktree): Promise<IsolationResult> {
    const out: IsolationResult = { base: wt.base, repo: wt.repo, files: [], diffstat: "" };
    if (!inside(wt.path, root) || wt.path === root) return { ...out, error: `not a worktree of ours: ${wt.path}` };
    if (fs.existsSync(wt.path)) {
      await must(["add", "-A"], wt.path);
      if ((await git(["diff", "--cached", "--quiet"], wt.path)).code === 1)
        await must(
          [...NO_HOOKS, "commit", "-q", "--no-verify", "-m", `subagents: ${wt.name}`],
          wt.path,
          await identity(wt.path),
        );
      const head = (await must(["rev-parse", "HEAD"], wt.path)).trim();
      out.files =
        head === wt.base
          ? []
          : parseNumstat(await must(["diff", "--numstat", "-z", "--no-renames", wt.base, head], wt.path));
      if (out.files.length) {
        out.diffstat = (await must(["diff", "--shortstat", wt.base, head], wt.path)).trim();
        const branch = await freeBranch(wt, head);
        out.branch = branch.name;
        if (!branch.made) await must(["branch", branch.name, head], wt.repo);
      }
    }
    tell(wt, out);
    await legacyRemove(wt);
    fs.rmSync(recordFile(wt.id), { force: true });
    phases.delete(wt.id);
    return out;
  }

  /** Removes an older version's `git worktree` (never anything outside our worktrees folder). */
  async function legacyRemove(wt: Worktree): Promise<void> {
    if (inside(wt.path, root) && wt.path !== root) {
      const r = await git(["worktree", "remove", "--force", "--force", wt.path], wt.repo);
      if (r.code !== 0 || fs.existsSync(wt.path)) {
        fs.rmSync(wt.path, { recursive: true, force: true });
        await git(["worktree", "prune"], wt.repo);
      }
    }
    removeTree(path.join(root, `${wt.id}.view`));
    fs.rmSync(path.join(root, `${wt.id}.index`), { force: true });
  }

  /** Remembered, so a task made in this process waits for the clean-up a front started earlier. */
  function cleanStale(): Promise<{ worktrees: StaleWorktree[]; leftovers: string[] }> {
    const next = cleanStaleNow();
    staleChecked = next;
    return next;
  }

  const readRecord = (file: string): OwnerFile | null => {
    try {
      return JSON.parse(fs.readFileSync(file, "utf8")) as OwnerFile;
    } catch {
      return null;
    }
  };

  const staleAction = (rec: Found): StaleWorktree => ({
    id: rec.id,
    path: keptAt(rec),
    repo: rec.repo,
    action: (rec.phase ?? "ready") === "ready" ? "keep" : "discard",
  });

  /** What the clean-up would do now: the records of dead owners, and what such owners left without one. */
  function staleWorktrees(): { worktrees: StaleWorktree[]; leftovers: string[]; records: Found[] } {
    let names: string[];
    try {
      names = fs.readdirSync(root);
    } catch {
      return { worktrees: [], leftovers: [], records: [] };
    }
    const records: Found[] = [];
    const leftovers: string[] = [];
    const ids = new Set<string>();
    const found = (file: string) => {
      const rec = readRecord(file);
      // Not a task's record (the overlay probe's finding is a dot file beside them).
      if (!rec || typeof rec.id !== "string" || typeof rec.path !== "string") return;
      ids.add(rec.id);
      if (!recordAlive(rec)) records.push({ ...rec, file });
    };
    for (const n of names) {
      const file = path.join(root, n);
      // A copy-on-write probe whose process died in the middle (cow-probe.ts).
      if (n.startsWith(PROBE_PREFIX)) {
        if (!pidAlive(Number(n.slice(PROBE_PREFIX.length).split("-")[0]))) leftovers.push(file);
        continue;
      }
      // A layer or copy being removed by a process that is gone (cow-probe.ts removeLater).
      const away = GONE.exec(n);
      if (away) {
        if (!pidAlive(Number(away[1]))) leftovers.push(file);
        continue;
      }
      // A record half-written by a process that is gone (atomic-write.ts): the whole one is beside it.
      const tmp = /\.json\.(\d+)\.tmp$/.exec(n);
      if (tmp) {
        if (!pidAlive(Number(tmp[1]))) leftovers.push(file);
        continue;
      }
      // A record claimed by a clean-up that was killed before it wrote its own: the task is still to finish.
      const claim = /^(.+)\.cleaning-(\d+)$/.exec(n);
      if (claim) {
        if (pidAlive(Number(claim[2]))) continue;
        if (names.includes(`${claim[1]}.json`)) leftovers.push(file);
        else found(file);
        continue;
      }
      if (n.endsWith(".json") && !n.startsWith(".")) found(file);
    }
    // What a task of a gone owner left without its record (an older version's snapshot index, a layer, a copy's
    // state whose record a finish had removed just before it was killed).
    for (const n of names) {
      const own = /^([0-9a-f]+)\.(index|layer|state)$/.exec(n);
      if (!own || ids.has(own[1]) || names.includes(`${own[1]}.json`)) continue;
      const st = fs.statSync(path.join(root, n), { throwIfNoEntry: false });
      if (st && Date.now() - st.mtimeMs > ORPHAN_INDEX_MS) leftovers.push(path.join(root, n));
    }
    return { worktrees: records.map(staleAction), leftovers, records };
  }

  async function cleanStaleNow(): Promise<{ worktrees: StaleWorktree[]; leftovers: string[] }> {
    const found = staleWorktrees();
    for (const f of found.leftovers) removeTree(f);
    const done: StaleWorktree[] = [];
    for (const rec of found.records) {
      // Claimed by renaming the record: of two processes cleaning at once, only one goes on.
      const claimed = path.join(root, `${rec.id}.cleaning-${process.pid}`);
      try {
        fs.renameSync(rec.file, claimed);
      } catch {
        continue;
      }
      const { file: _, ...own } = rec;
      const phase = rec.phase ?? "ready";
      saveRecord(own, phase);
      fs.rmSync(claimed, { force: true });
      // What the dead owner's setup, gate or child left running ends before its work is read and removed: the
      // processes of its run (never one working in the user's repository for someone else).
      await endOrphans(rec, rec.id, keptAt(rec));
      const entry = staleAction(rec);
      if (phase !== "ready" || !rec.base) {
        await discard(own);
        done.push(entry);
        continue;
      }
      let r: IsolationResult;
      try {
        r = await finish(own);
      } catch (err) {
        r = { base: rec.base, repo: rec.repo, files: [], diffstat: "", error: (err as Error).message };
      }
      done.push({ ...entry, ...(r.branch ? { branch: r.branch } : {}), ...(r.error ? { error: r.error } : {}) });
    }
    return { worktrees: done, leftovers: found.leftovers };
  }

  return {
    locate,
    create,
    inPlace: layerInPlace,
    settingUp,
    seal,
    finish,
    cleanStale,
    staleWorktrees: () => {
      const { worktrees, leftovers } = staleWorktrees();
      return { worktrees, leftovers };
    },
  };
}
