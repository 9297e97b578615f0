// `subagents apply ID`: an isolated task's branch into the user's current tree — `git merge`, or with
// --cherry-pick only the sub-agent's own commits (the branch starts with a snapshot of what was uncommitted
// when the task started). Conflicts are git's own: the files are listed and the way out is named.
import * as path from "node:path";
import { git } from "../../host/git-command.ts";
import { parse } from "../flags/args.ts";
import { APPLY_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { cliContext, openStore } from "../engine.ts";
import { EXIT, UsageError } from "../errors.ts";
import { APPLY_HELP } from "../help.ts";

export async function cmdApply(argv: string[]): Promise<number> {
  const { values, positionals } = parse("apply", argv, parseOptions(APPLY_FLAGS));
  if (values.help) {
    console.log(APPLY_HELP);
    return EXIT.ok;
  }
  if (positionals.length !== 1)
    throw new UsageError(`apply: expected one session ID (got ${positionals.length}). See 'subagents help apply'.`);
  const id = positionals[0];
  const cwd = path.resolve(values.cwd ?? process.cwd());
  const record = openStore(cliContext(cwd)).getSession(id);
  if (!record) throw new UsageError(`apply: no session "${id}". List them with: subagents sessions`);
  const run = [...record.runs].reverse().find((r) => r.isolation);
  if (!run?.isolation) throw new UsageError(`apply: session "${id}" did not run isolated (no branch to apply).`);
  const iso = run.isolation;
  if (!iso.branch) throw new UsageError(`apply: session "${id}" changed nothing: there is no branch to apply.`);
  const top = await git(["rev-parse", "--show-toplevel"], cwd);
  if (top.code !== 0) throw new UsageError(`apply: ${cwd} is not inside a git repository.`);
  if ((await git(["rev-parse", "--verify", "-q", `refs/heads/${iso.branch}`], cwd)).code !== 0) {
    throw new UsageError(
      `apply: branch ${iso.branch} is not in the repository at ${top.stdout.trim()} (deleted, or another repository).`,
    );
  }
  const pick = !!values["cherry-pick"];
  const args = pick ? ["cherry-pick", `${iso.base}..${iso.branch}`] : ["merge", "--no-edit", iso.branch];
  const r = await git(args, cwd);
  if (r.code === 0) {
    console.log(
      `Applied ${iso.branch} (${iso.diffstat}) ${pick ? "by cherry-pick" : "by merge"} to ${top.stdout.trim()}.`,
    );
    return EXIT.ok;
  }
  const conflicted = (await git(["diff", "--name-only", "--diff-filter=U"], cwd)).stdout.split("\n").filter(Boolean);
  if (conflicted.length) {
    process.stderr.write(
      `subagents: apply: conflict applying ${iso.branch} in ${conflicted.length} file(s):\n${conflicted.map((f) => `  ${f}\n`).join("")}`,
    );
    process.stderr.write(
      pick
        ? "Resolve them, then 'git add' them and 'git cherry-pick --continue'; or undo with 'git cherry-pick --abort'.\n"
        : "Resolve them, then 'git add' them and 'git commit'; or undo with 'git merge --abort'.\n",
    );
  } else {
    process.stderr.write(`subagents: apply: git ${args[0]} refused: ${(r.stderr || r.stdout).trim()}\n`);
  }
  return EXIT.taskFailed;
}
