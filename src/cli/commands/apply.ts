// `subagents apply ID`: an isolated task's branch into the user's current tree — `git merge`, or with
// --cherry-pick only the sub-agent's own commits (the branch starts with a snapshot of what was uncommitted
// when the task started). Conflicts are git's own: the files are listed and the way out is named. While git
// changes the tree a marker says so (apply/guard.ts): an apply killed midway is found by the next one (and by
// doctor), which says how to finish or undo it; `--abort` undoes it.
import * as path from "node:path";
import { git, runProgram } from "../../host/git-command.ts";
import { parse } from "../flags/args.ts";
import { APPLY_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { cliContext, openStore, worktreeHost } from "../engine.ts";
import { EXIT, UsageError } from "../errors.ts";
import { APPLY_HELP } from "../help.ts";
import {
  applyState,
  newMarker,
  readMarker,
  removeMarker,
  repoPlace,
  stateLines,
  undoApply,
  writeMarker,
  type ApplyMarker,
  type RepoPlace,
} from "../apply/guard.ts";
import type { IsolationResult } from "../../core/isolation-types.ts";
import { procStartTime } from "../../host/process-identity.ts";

const say = (line: string) => process.stderr.write(`subagents: apply: ${line}\n`);

export async function cmdApply(argv: string[]): Promise<number> {
  const { values, positionals } = parse("apply", argv, parseOptions(APPLY_FLAGS));
  if (values.help) {
    console.log(APPLY_HELP);
    return EXIT.ok;
  }
  const cwd = path.resolve(values.cwd ?? process.cwd());
  if (values.abort) {
    if (positionals.length)
      throw new UsageError(`apply: --abort takes no session ID (got "${positionals[0]}"). See 'subagents help apply'.`);
    return abort(cwd);
  }
  if (positionals.length !== 1)
    throw new UsageError(`apply: expected one session ID (got ${positionals.length}). See 'subagents help apply'.`);
  const id = positionals[0];
  const iso = await isolationOf(cwd, id);
  const place = await repoPlace(cwd);
  if (!place) throw new UsageError(`apply: ${cwd} is not inside a git repository.`);
  if ((await git(["rev-parse", "--verify", "-q", `refs/heads/${iso.branch}`], cwd)).code !== 0) {
    throw new UsageError(
      `apply: branch ${iso.branch} is not in the repository at ${place.top} (deleted, or another repository).`,
    );
  }
  const earlier = readMarker(place);
  if (earlier && !(await settleEarlier(place, earlier, id))) return EXIT.taskFailed;
  const pick = !!values["cherry-pick"];
  const branch = iso.branch!;
  const args = pick ? ["cherry-pick", `${iso.base}..${branch}`] : ["merge", "--no-edit", branch];
  const head = (await git(["rev-parse", "--verify", "-q", "HEAD"], cwd)).stdout.trim();
  const marker = newMarker({
    session: id,
    branch,
    mode: pick ? "cherry-pick" : "merge",
    head,
    files: await filesWritten(cwd, head, pick ? iso.base : null, branch),
  });
  writeMarker(place, marker);
  const r = await runProgram("git", args, {
    cwd,
    started: (gitPid) => writeMarker(place, { ...marker, gitPid, gitStart: procStartTime(gitPid) }),
  });
  // git has ended: applied, or stopped where git itself says how to go on (a conflict), or refused.
  removeMarker(place);
  if (r.code === 0) {
    console.log(`Applied ${branch} (${iso.diffstat}) ${pick ? "by cherry-pick" : "by merge"} to ${place.top}.`);
    return EXIT.ok;
  }
  const conflicted = (await git(["diff", "--name-only", "--diff-filter=U"], cwd)).stdout.split("\n").filter(Boolean);
  if (conflicted.length) {
    process.stderr.write(
      `subagents: apply: conflict applying ${branch} in ${conflicted.length} file(s):\n${conflicted.map((f) => `  ${f}\n`).join("")}`,
    );
    process.stderr.write(
      pick
        ? "Resolve them, then 'git add' them and 'git cherry-pick --continue'; or undo with 'git cherry-pick --abort'.\n"
        : "Resolve them, then 'git add' them and 'git commit'; or undo with 'git merge --abort'.\n",
    );
  } else {
    say(`git ${args[0]} refused: ${(r.stderr || r.stdout).trim()}`);
  }
  return EXIT.taskFailed;
}

/** The session's isolation with a branch to apply. A worktree its dead owner left unfinished is finished first
 *  (as prune would), so the branch it becomes is applied. */
async function isolationOf(cwd: string, id: string): Promise<IsolationResult & { branch: string }> {
  const ctx = cliContext(cwd);
  const store = openStore(ctx);
  const find = () => {
    const record = store.getSession(id);
    if (!record) throw new UsageError(`apply: no session "${id}". List them with: subagents sessions`);
    return [...record.runs].reverse().find((r) => r.isolation)?.isolation;
  };
  let iso = find();
  if (iso?.worktree) {
    await worktreeHost(ctx, store).cleanStale();
    iso = find();
  }
  if (!iso) throw new UsageError(`apply: session "${id}" did not run isolated (no branch to apply).`);
  if (iso.worktree && !iso.branch)
    throw new UsageError(
      `apply: session "${id}" is still running: its changes are not on a branch yet (its worktree: ${iso.worktree}). Wait for it: subagents wait ${id}`,
    );
  if (!iso.branch) throw new UsageError(`apply: session "${id}" changed nothing: there is no branch to apply.`);
  return { ...iso, branch: iso.branch };
}

/** The files an apply writes: what the branch changed since where it meets HEAD (a merge), or since its base (the
 *  sub-agent's own commits, for a cherry-pick). */
async function filesWritten(cwd: string, head: string, base: string | null, branch: string): Promise<string[]> {
  const from = base ?? (head ? (await git(["merge-base", head, branch], cwd)).stdout.trim() : "");
  const range = from ? [from, branch] : [branch];
  const out = (await git(["diff", "--name-only", "-z", "--no-renames", ...range], cwd)).stdout;
  return out.split("\0").filter(Boolean);
}

/** An earlier apply's marker: what it left is dealt with before this one starts, or the person is told how. */
async function settleEarlier(place: RepoPlace, m: ApplyMarker, id: string): Promise<boolean> {
  const state = await applyState(place, m);
  const { said, fix } = stateLines(place, m, state);
  if (state.kind === "done") {
    removeMarker(place);
    return true;
  }
  // The same session's apply with HEAD not moved: undone here (its files as before), then applied again.
  if (state.kind === "half" && m.session === id) {
    const undone = await undoApply(place, m);
    say(undone.ok ? `${undone.said}; applying again` : `${said}; could not undo it: ${undone.said}`);
    return undone.ok;
  }
  say(said);
  process.stderr.write(`  ${fix}\n`);
  return false;
}

async function abort(cwd: string): Promise<number> {
  const place = await repoPlace(cwd);
  if (!place) throw new UsageError(`apply: ${cwd} is not inside a git repository.`);
  const m = readMarker(place);
  if (!m) {
    console.log(`No stopped 'subagents apply' in ${place.top}: nothing to undo.`);
    return EXIT.ok;
  }
  const undone = await undoApply(place, m);
  if (undone.ok) console.log(`${undone.said[0].toUpperCase()}${undone.said.slice(1)}.`);
  else say(undone.said);
  return undone.ok ? EXIT.ok : EXIT.taskFailed;
}
