// --help texts, kept next to each other; test/e2e/docs.test.ts checks that docs/cli.md names every command and option.
import { optionsBlock } from "./flags/flag.ts";
import {
  APPLY_FLAGS,
  BATCH_EXPORT_FLAGS,
  BATCH_FLAGS,
  BATCH_MERGE_FLAGS,
  BATCH_STATUS_FLAGS,
  BATCH_SUBMIT_FLAGS,
  DELEGATE_FLAGS,
  INSTALL_FLAGS,
  OUTPUT_FLAGS,
  PROFILES_FLAGS,
  RUN_FLAGS,
  SCHEDULE_ADD_FLAGS,
  SCHEDULE_LIST_FLAGS,
  SESSIONS_FLAGS,
  SESSION_FLAGS,
  USAGE_FLAGS,
} from "./flags/command-flags.ts";

export const RUN_HELP = `Usage: subagents run AGENT "task" [options]

Runs one sub-agent with the profile AGENT ("default" for pi's defaults) on the task and prints its result:
its plain final answer, or what it reported with subagent_finalize (setting or profile "finalize: true" makes
that call required). The task may also come from standard input: subagents run scout - < task.md

Progress goes to standard error (one line per tool call, then a status line); the result to standard output.

${optionsBlock(RUN_FLAGS)}

Exit codes: 0 completed, 1 the sub-agent failed, 2 usage or configuration error, 129/130/143 stopped by a signal (SIGHUP/SIGINT/SIGTERM).`;

export const OUTPUT_HELP = `Usage: subagents output ID [options]

Prints the final output of the latest run of session ID (the full text, never truncated) on standard output,
after a short header (status, agent, model, cwd, cost) on standard error.

${optionsBlock(OUTPUT_FLAGS)}

Exit codes: 0 the run completed (or is still running), 1 it failed or the session was not found, 2 usage error.`;

export const SESSION_HELP = `Usage: subagents session ID [options]

Prints session ID: a header (status, agent, model, cwd, runs, cost), then every run's transcript — the
prompt, the assistant's messages, tool calls, and tool results (failed ones marked ✗).

${optionsBlock(SESSION_FLAGS)}

Exit codes: 0 the last run completed (or is still running), 1 it failed or the session was not found, 2 usage error.`;

export const SESSIONS_HELP = `Usage: subagents sessions [options]

Lists recent sessions, newest first, as a table that fits the terminal: ID, STATUS, AGENT, COST, UPDATED, NAME
(narrow terminals shorten names and leave out COST, then UPDATED).

${optionsBlock(SESSIONS_FLAGS)}

Exit codes: 0 success, 2 usage or configuration error.`;

export const USAGE_HELP = `Usage: subagents usage [--since AGE] [--by agent|day|folder] [options]

What sub-agents spent in the runs started in the last AGE (default 7d), from the session store: one row per agent
(default), day or working folder, the costliest first (days newest first), then the total — RUNS, FAILED, INPUT
tokens (without those read from the cache), OUTPUT tokens, CACHE READ tokens, COST in USD and TIME (the runs' wall
time added up). Every front records its runs here: the CLI, pi's tools, subagents mcp, background runs, schedules.

${optionsBlock(USAGE_FLAGS)}

Exit codes: 0 success, 2 usage or configuration error.`;

export const PROFILES_HELP = `Usage: subagents profiles [--cwd DIR] [--all] [--json] [--check]

Lists the agent profiles available from DIR (default: current directory) as a table: name, source (built-in,
user, project; * = another file of that name is shadowed), harness (whose file it is: pi, claude, codex, cursor,
opencode, gemini, qwen, copilot, omp), runtime (only when an agent runs on another CLI than pi), model as
written → the model it runs on here, tools, and warnings (tolerant front matter, tools not available here,
fields not supported here). Agent folders are searched recursively; files that could not be loaded are named
on stderr with the reason.

${optionsBlock(PROFILES_FLAGS)}

Exit codes: 0 success (with --check: no agent file has an error), 1 --check found errors, 2 usage error.`;

export const FLOW_HELP = `Usage: subagents flow                       list the saved workflows visible from here
       subagents flow NAME ["input" ...] [delegate options]

Runs a saved workflow: .pi/workflows/NAME.yaml|yml|json (this project; the nearest folder up from the current
directory wins) or <agentDir>/workflows/NAME.* — a {"tasks": [...], "profile"?} document like delegate --tasks,
where {{input}} stands for the text given after NAME. Every delegate option applies (--json, --background,
--concurrency, --gate, --cwd, …). A project workflow does not run when settings subagents.projectAgents is
"deny".

Exit codes: 0 every task completed, 1 a task failed or was skipped, 2 usage error (unknown workflow, bad file).`;

export const DELEGATE_HELP = `Usage: subagents delegate "task" ["task" ...] [options]
       subagents delegate --tasks FILE|- [options]

Runs 1–16 sub-agents in parallel (4 at a time by default). Each one's output is its plain final answer, or
what it reported with subagent_finalize. On a terminal each task gets a live window that always fits
(finished tasks shrink to one line, then running windows share the rows); otherwise one line per task start
and end. At the end: one status line per task, each output under its own rule, and a totals line.
With more tasks than run at once (or tasks that wait for others), later tasks run in the pi children already
started (each in a session of its own) when they would start alike; subagents.reuseChildren: false: a pi each.
Ctrl-C stops every sub-agent (a second Ctrl-C kills them at once).

${optionsBlock(DELEGATE_FLAGS)}

Caps (settings subagents.maxSpawnsPerSession, maxSessionCost; per invocation here): a call past them, or
with two identical tasks (same prompt, agent, cwd), is refused before anything starts (exit 2); once
maxSessionCost is spent, queued tasks do not start.

Exit codes: 0 all tasks completed, 1 a task failed, 2 usage or configuration error, 129/130/143 stopped by a signal (SIGHUP/SIGINT/SIGTERM).`;

export const INSTALL_HELP = `Usage: subagents install [--uninstall]
       subagents install --bin [--prefix DIR]

Writes the bundled pi extension to <agentDir>/extensions/subagents.js, where pi loads it automatically
(<agentDir> is $PI_CODING_AGENT_DIR or ~/.pi/agent). --uninstall removes it. Sub-agents started by pi never
get the delegation tools themselves beyond subagents.maxDepth (default 1).
--bin copies this executable to DIR (default ~/.local/bin) and says if DIR is not on your PATH.

${optionsBlock(INSTALL_FLAGS)}

Exit codes: 0 success, 2 usage or configuration error.`;

export const APPLY_HELP = `Usage: subagents apply ID [--cherry-pick] [--cwd DIR]
       subagents apply --abort [--cwd DIR]

Brings the changes of an isolated task (run with --isolation worktree or "isolation": "worktree") into the
current tree of the repository in the current directory: merges its branch subagents/<name>-<id>, or with
--cherry-pick replays only the sub-agent's own commits (without the snapshot of your then-uncommitted changes
that the branch starts from). ID is the task's session id. Git refuses when your uncommitted changes are in
the way; commit or stash them first.

On a conflict git leaves the conflicted files marked in your tree: they are listed, and the command says how
to finish (git add + git commit / git cherry-pick --continue) or undo (git merge --abort / git cherry-pick --abort).

An apply stopped midway (killed, its terminal closed) is found by the next apply and by doctor, which say what it
left (files half-written, git's merge or cherry-pick in progress) and how to finish or undo it. --abort undoes it;
applying the same session again undoes a half-written tree first. A session whose owner died before its worktree
was finished is finished first (as prune does), then its branch applied.

${optionsBlock(APPLY_FLAGS)}

Exit codes: 0 applied, 1 conflict or git refused, 2 usage error (unknown session, no branch, not a repository).`;

export const SCHEDULE_HELP = `Usage: subagents schedule add NAME --cron "EXPR" [--cwd DIR] -- <subagents arguments>
       subagents schedule list [--json]
       subagents schedule rm NAME
       subagents schedule run NAME

Runs a subagents command (run, flow or delegate) unattended on the machine's own scheduler: a line in your
crontab, tagged "# subagents:NAME" (no other line of the crontab is ever changed). A schedule runs as you, in
the folder it was added from, with the pi agent dir, database and subagents/pi settings variables in force when
it was added; its runs are recorded under its name (subagents sessions, session ID --json), and a run due while
the last one is still going is skipped and recorded as skipped. Hooks (settings subagents.hooks) see the
schedule's name. More in docs/automation.md (also: systemd user timers instead of cron).

Subcommands (each has --help):
  add NAME   Add a schedule: subagents schedule add nightly --cron "0 3 * * *" -- run reviewer "review today's changes"
  list       The schedules, their last run, and anything wrong with them (--json: one object per line)
  rm NAME    Remove a schedule (its crontab line and definition; its recorded runs stay)
  run NAME   Run a schedule now, once, the way cron runs it`;

export const SCHEDULE_ADD_HELP = `Usage: subagents schedule add NAME --cron "EXPR" [--cwd DIR] -- <subagents arguments>

Adds the schedule NAME (lowercase letters, digits, "-") to your crontab. Everything after "--" is what runs:
  subagents schedule add nightly-review --cron "0 3 * * *" -- run reviewer "review the changes of the last day"
  subagents schedule add deps --cron "0 9 * * 1" -- flow dependency-check "weekly"
  subagents schedule add docs --cron "30 2 * * *" -- delegate "check links in docs/" "check the examples run"

${optionsBlock(SCHEDULE_ADD_FLAGS)}

What it keeps: the definition in <agentDir>/schedules/NAME.json (0600): the arguments, the folder, this
executable's path, and PATH, PI_CODING_AGENT_DIR, SUBAGENTS_DB and the other SUBAGENTS_* / PI_* variables of
this shell (names that look secret, such as *_KEY or *_TOKEN, are left out: keep provider keys in pi's auth.json
or models.json). The crontab line holds only the two paths. What a run prints goes to <agentDir>/schedules/NAME.log.

Needs cron: the crontab command and a running cron daemon (subagents doctor checks both).`;

export const SCHEDULE_LIST_HELP = `Usage: subagents schedule list [--json]

Lists the schedules: when, what, where, and their last run (completed, error, or skipped because the one before
was still going). Also says what is wrong: no cron daemon, a definition whose crontab line is gone, a crontab
line of ours whose definition is gone.

${optionsBlock(SCHEDULE_LIST_FLAGS)}`;

export const SCHEDULE_RM_HELP = `Usage: subagents schedule rm NAME

Removes the schedule's line from your crontab (only the line tagged "# subagents:NAME") and its definition. Its
recorded runs stay in the session store, and its log file is kept.`;

export const SCHEDULE_RUN_HELP = `Usage: subagents schedule run NAME

Runs the schedule now, once, as cron would: in its folder, with the environment it keeps (cron's own HOME, USER,
SHELL and nothing else of this shell), recorded under its name. A run of it still going makes this one skip
(recorded as skipped; exit 1). Its exit code is the command's. cron calls it with --from-cron (timestamps on its
log lines; a skip exits 0).`;

export const BATCH_HELP = `Usage: subagents batch ITEMS --prompt TEMPLATE [options]
       subagents batch status [JOB] | export JOB | submit ITEMS … --slurm N | merge FILE… --out FILE

Runs one prompt over every item of ITEMS, a .jsonl file (one JSON object a line) or a .csv file (a header row):
{{column}} in the template takes the item's value. Each item is one sub-agent task. The job is recorded before
anything starts, and its id printed; the same command run again resumes it: items done with the same prompt,
agent, model and schema are kept, items in flight when the run died and failures worth retrying run again (up to
--max-attempts), an item whose prompt changed runs again. On a terminal one live summary shows the progress.

  subagents batch issues.jsonl --prompt "Label issue {{id}}: {{title}}" --out labels.jsonl --concurrency 16

Subcommands: status (counts, rate, ETA, spend), export (the results, also while it runs), submit (a Slurm array
job of N shards), merge (shard result files into one). See docs/batch.md.

${optionsBlock(BATCH_FLAGS)}

Exit codes: 0 every item completed, 1 an item failed or some did not run (budget, stop), 2 usage error,
129/130/143 stopped by a signal (SIGHUP/SIGINT/SIGTERM) (run the same command again to go on).`;

export const BATCH_STATUS_HELP = `Usage: subagents batch status [JOB] [--json]

Shows a batch job (the latest one without JOB): whether it runs and where, its items by status, the rate, the time
left at that rate, what it spent and its last failures. A job submitted to Slurm shows each shard's results so far
(from RESULTS.jsonl.I) and its array tasks still queued or running (squeue).

${optionsBlock(BATCH_STATUS_FLAGS)}

Exit codes: 0 shown, 2 no such job.`;

export const BATCH_EXPORT_HELP = `Usage: subagents batch export JOB [--csv] [--all]

Writes the job's results to standard output, in the order of its items file: one JSON line per finished item (the
lines --out gets: id, status, result, data, error, attempts, sessionId, usage, cost). Works while the job runs;
for a job submitted to Slurm, the lines its shards have written so far, shard by shard.

${optionsBlock(BATCH_EXPORT_FLAGS)}

Exit codes: 0 written, 2 no such job.`;

export const BATCH_SUBMIT_HELP = `Usage: subagents batch submit ITEMS --prompt TEMPLATE --slurm N --out RESULTS.jsonl [options]

Writes and submits a Slurm array job of N tasks: task I runs 'subagents batch ITEMS … --shard I/N' on its node,
with its own records (RESULTS.jsonl.I.db) and results (RESULTS.jsonl.I) beside --out. The items are checked here
first, as each shard would (a placeholder no item has, an id given twice, an empty file), and counted per shard.
Submitting again resumes every shard. Follow it with 'subagents batch status JOB'; gather the results with
'subagents batch merge --job JOB --out MERGED.jsonl --wait'.

${optionsBlock(BATCH_SUBMIT_FLAGS)}

Exit codes: 0 submitted, 2 usage error or sbatch refused.`;

export const BATCH_MERGE_HELP = `Usage: subagents batch merge FILE... --out MERGED.jsonl
       subagents batch merge --job JOB --out MERGED.jsonl [--wait]

Gathers result files (shards' RESULTS.jsonl.I, or any --out files) into one: one line per id, a finished line over
one that is not, a completed one over a failed one. With --job, the files of a submitted job; --wait waits for its
Slurm job to end first.

${optionsBlock(BATCH_MERGE_FLAGS)}

Exit codes: 0 merged (every line finished), 1 merged with items missing or failed, 2 usage error.`;
