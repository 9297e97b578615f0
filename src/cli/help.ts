// --help texts, kept next to each other; test/e2e/docs.test.ts checks that docs/cli.md names every command and option.

export const MAIN_HELP = `subagents — run pi sub-agents: isolated child pi processes with their own context, tools and model.

Usage:
  subagents <command> [options]

Commands:
  delegate "task" ...    Run up to 16 sub-agents in parallel with live progress windows
  run AGENT "task"       Run one sub-agent with a profile and print its result
  flow [NAME "input"]    Run a saved workflow (.pi/workflows/NAME.yaml); without NAME, list them
  output ID              Print the final output of a session's latest run
  session ID             Print a session's full transcript (all runs)
  sessions               List recent sessions (--running: only those still running, with their owner)
  wait ID ...            Wait for sessions' runs to end and print their outputs like delegate
  steer ID "message"     Send a message to a running sub-agent (delivered at its next turn boundary)
  answer ID "text"       Answer the question a running sub-agent is waiting on
  cancel ID ... | --all  Stop running sub-agents (recorded as cancelled)
  logs ID [-f]           A background session's events as readable lines (-f: follow until it ends)
  attach ID              The live window of a running session (Ctrl-C detaches; the run goes on)
  profiles               List agent profiles (and problems with profile files)
  install [--uninstall]  Install the pi extension into pi's extensions folder (or remove it; --bin: this executable onto PATH)
  demo                   Watch four scripted sub-agents run (real pi, scripted local model, no API key)
  doctor [--json]        Check the setup: pi, model credentials, database, extension, profiles, terminal
  apply ID               Merge an isolated task's branch into the current tree (--cherry-pick: its commits only)
  prune                  Delete old sessions and their files (--older-than 30d, --keep N), compact the database
  schedule add|list|rm|run  Run delegate/run/flow on a cron schedule (the user's crontab), unattended
  completion SHELL       Print a completion script for bash, zsh or fish
  mcp                    Serve the delegation tools to an MCP client (Claude Code, Codex, Cursor, …) on stdio

Options:
  -h, --help             Show help (also: subagents help <command>, subagents <command> --help)
  -v, --version          Show the version, the pi inside and the build commit (--verbose: which pi children run)

Exit codes: 0 success, 1 a task failed, 2 usage or configuration error, 130/143 interrupted.
Environment: PI_CODING_AGENT_DIR (pi's agent dir, default ~/.pi/agent), SUBAGENTS_DB (session database),
SUBAGENTS_PI (command that runs pi), NO_COLOR.`;

export const RUN_HELP = `Usage: subagents run AGENT "task" [options]

Runs one sub-agent with the profile AGENT ("default" for pi's defaults) on the task and prints its result:
its plain final answer, or what it reported with subagent_finalize (setting or profile "finalize: true" makes
that call required). The task may also come from standard input: subagents run scout - < task.md

Progress goes to standard error (one line per tool call, then a status line); the result to standard output.

Options:
  --session ID      Continue an earlier session (the child keeps its full context)
  --cwd DIR         Working directory for the child (default: current directory)
  --model M         Model for the child, "provider/id" or "provider/id:thinking" (overrides the profile)
  --timeout S       Seconds after which the child is stopped once it makes no new tool call (default 600)
  --max-turns N     Budget: model turns (then one wrap-up turn, then BUDGET_EXCEEDED)
  --max-tokens N    Budget: tokens read and written, cache included
  --max-cost USD    Budget: dollars, as pi prices the model
  --json            Print JSON lines on stdout; the last line is {"type":"summary",...}
  --background      Start it under a detached supervisor and return at once with its session id
  --fork SESSION    Start the task from a copy of this pi session's conversation (a session file, or its id
                    under <agentDir>/sessions), without the sub-agent tools' traffic
  --gate CMD        Acceptance check: a shell command that must exit 0 in the task's folder before the task
                    counts as completed; its output goes back to the child as a correction (GATE_FAILED after
                    --gate-retries N corrections, default 2; --gate-timeout S, default 300)
  --isolation worktree
                    Run in a git worktree of the repository; changes end on a branch subagents/<name>-<id>
                    (see 'subagents help apply'); a directory outside git fails (ISOLATION_FAILED)
  --sandbox         Run the child in the sandbox (bubblewrap): filesystem read-only except its folder,
                    home hidden except pi's settings; see docs/sandbox-runners.md
  --runner R        Where the child runs: local (default), docker (a container), slurm (a job step)
  --runtime R       Which CLI runs it: pi (default), claude-code, codex, gemini, opencode (the agent
                    file's "runtime"); see docs/agents.md
  -q, --quiet       No progress lines, only the final status line
  --no-color        No colours (also NO_COLOR=1)
  -h, --help        Show this help

Exit codes: 0 completed, 1 the sub-agent failed, 2 usage or configuration error, 130/143 interrupted.`;

export const OUTPUT_HELP = `Usage: subagents output ID [options]

Prints the final output of the latest run of session ID (the full text, never truncated) on standard output,
after a short header (status, agent, model, cwd, cost) on standard error.

Options:
  --json        One JSON object: {"type":"output","sessionId","status","output",...}
  --no-color    No colours (also NO_COLOR=1)
  -h, --help    Show this help

Exit codes: 0 the run completed (or is still running), 1 it failed or the session was not found, 2 usage error.`;

export const SESSION_HELP = `Usage: subagents session ID [options]

Prints session ID: a header (status, agent, model, cwd, runs, cost), then every run's transcript — the
prompt, the assistant's messages, tool calls, and tool results (failed ones marked ✗).

Options:
  --json        One JSON object with the transcript as the sub-agent tools return it
  --no-color    No colours (also NO_COLOR=1)
  -h, --help    Show this help

Exit codes: 0 the last run completed (or is still running), 1 it failed or the session was not found, 2 usage error.`;

export const SESSIONS_HELP = `Usage: subagents sessions [options]

Lists recent sessions, newest first, as a table that fits the terminal: ID, STATUS, AGENT, COST, UPDATED, NAME
(narrow terminals shorten names and leave out COST, then UPDATED).

Options:
  --limit N     How many (default 20)
  --running     Only sessions still running or queued, with the process that owns them (pid, role)
  -w, --wide    Every column (adds RUNS and CWD), never shortened
  --json        One JSON object per line
  --no-color    No colours (also NO_COLOR=1)
  -h, --help    Show this help

Exit codes: 0 success, 2 usage or configuration error.`;

export const PROFILES_HELP = `Usage: subagents profiles [--cwd DIR] [--all] [--json] [--check]

Lists the agent profiles available from DIR (default: current directory) as a table: name, source (built-in,
user, project; * = another file of that name is shadowed), harness (whose file it is: pi, claude, codex, cursor,
opencode, gemini, qwen, copilot, omp), runtime (only when an agent runs on another CLI than pi), model as
written → the model it runs on here, tools, and warnings (tolerant front matter, tools not available here,
fields not supported here). Agent folders are searched recursively; files that could not be loaded are named
on stderr with the reason.

Options:
  --all, -v, --verbose  Each profile's harness, file, description, memory file and every warning, plus the
                        files that are not agents (no front matter or no description, documentation files)
  --json                One JSON object per line: {"type":"profile", name, source, harness, runtime, filePath,
                        memoryFile?, runsOn, warnings, …}, then "shadowed", "diagnostic" (and with --all
                        "skipped") lines
  --check               Exit 1 if any agent file has an error (for a collection's CI)
  --cwd DIR             Look from DIR instead of the current directory
  -h, --help            Show this help

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

Options:
  --name NAME         Name of the next task (repeat once per task; default task-1, task-2, …)
  --profile P         Profile for every task (default: pi's defaults)
  --cwd DIR           Working directory for every task (default: current directory)
  --timeout S         Seconds after which a task is stopped once it makes no new tool call (default 600)
  --concurrency N     Tasks at once, 1–16 (default 4, setting subagents.concurrency)
  --file PATH         Prepend this file to every task's prompt (repeatable)
  --model M           Model for every task, "provider/id" or "provider/id:thinking" (overrides profiles)
  --resume ID         Continue session ID with the (single) task given
  --max-turns N       Budget per task: model turns (then one wrap-up turn, then BUDGET_EXCEEDED)
  --max-tokens N      Budget per task: tokens read and written, cache included
  --max-cost USD      Budget per task: dollars, as pi prices the model
  --max-total-cost USD  Budget for the whole call: running tasks wrap up, queued ones do not start
  --tasks FILE|-      Read tasks as delegate_to_subagents JSON or YAML: {"tasks":[{"name","prompt",...}],"profile"?}
                      (a task may wait for others: "after": ["scout"], and use "{{scout}}" = its output)
  --isolation worktree
                      Each task in its own git worktree; its changes end on its own branch, listed at the
                      end with files, diffstat and files that several tasks changed (also a task field)
  --sandbox           Each task in the sandbox (bubblewrap; also a task field "sandbox": true)
  --runner R          Where the children run: local (default), docker, slurm (also a task field "runner")
  --runtime R         Which CLI runs them: pi (default), claude-code, codex, gemini, opencode (also a
                      task field "runtime")
  --fork SESSION      Start every task from a copy of this pi session's conversation (a session file, or its id
                      under <agentDir>/sessions), without the sub-agent tools' traffic (also a task field
                      "context": "fork")
  --gate CMD          Acceptance check for every task: a shell command that must exit 0 in the task's folder
                      before the task counts as completed; its output goes back to the child as a correction
                      (GATE_FAILED after --gate-retries N corrections, default 2; --gate-timeout S, default 300;
                      also task fields "gate", "gateRetries", "gateTimeout")
  --json              JSON lines on stdout (human text on stderr); the last line is {"type":"summary",...}
  -q, --quiet         Only the final status lines and outputs
  --background        Start the tasks under a detached supervisor and return at once with their session
                      ids (--json: one line per task, then a summary); collect with 'subagents wait ID…'
  --no-color          No colours (also NO_COLOR=1)
  -h, --help          Show this help

Caps (settings subagents.maxSpawnsPerSession, maxSessionCost; per invocation here): a call past them, or
with two identical tasks (same prompt, agent, cwd), is refused before anything starts (exit 2); once
maxSessionCost is spent, queued tasks do not start.

Exit codes: 0 all tasks completed, 1 a task failed, 2 usage or configuration error, 130/143 interrupted.`;

export const INSTALL_HELP = `Usage: subagents install [--uninstall]
       subagents install --bin [--prefix DIR]

Writes the bundled pi extension to <agentDir>/extensions/subagents.js, where pi loads it automatically
(<agentDir> is $PI_CODING_AGENT_DIR or ~/.pi/agent). --uninstall removes it. Sub-agents started by pi never
get the delegation tools themselves beyond subagents.maxDepth (default 1).
--bin copies this executable to DIR (default ~/.local/bin) and says if DIR is not on your PATH.

Options:
  --uninstall   Remove the extension again
  --bin         Copy this executable to DIR (--prefix DIR, default ~/.local/bin)
  -h, --help    Show this help

Exit codes: 0 success, 2 usage or configuration error.`;

export const APPLY_HELP = `Usage: subagents apply ID [--cherry-pick] [--cwd DIR]

Brings the changes of an isolated task (run with --isolation worktree or "isolation": "worktree") into the
current tree of the repository in the current directory: merges its branch subagents/<name>-<id>, or with
--cherry-pick replays only the sub-agent's own commits (without the snapshot of your then-uncommitted changes
that the branch starts from). ID is the task's session id. Git refuses when your uncommitted changes are in
the way; commit or stash them first.

On a conflict git leaves the conflicted files marked in your tree: they are listed, and the command says how
to finish (git add + git commit / git cherry-pick --continue) or undo (git merge --abort / git cherry-pick --abort).

Options:
  --cherry-pick  Cherry-pick the sub-agent's commits instead of merging the branch
  --cwd DIR      The repository to apply to (default: current directory)
  -h, --help     Show this help

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

Options:
  --cron EXPR   When: five fields, minute hour day-of-month month day-of-week (e.g. "*/15 * * * *", "0 3 * * 1-5"),
                names for months and weekdays, or @hourly, @daily, @weekly, @monthly, @yearly. Times are the
                machine's local time, as cron reads them.
  --cwd DIR     The folder it runs in (default: the current one)

What it keeps: the definition in <agentDir>/schedules/NAME.json (0600): the arguments, the folder, this
executable's path, and PATH, PI_CODING_AGENT_DIR, SUBAGENTS_DB and the other SUBAGENTS_* / PI_* variables of
this shell (names that look secret, such as *_KEY or *_TOKEN, are left out: keep provider keys in pi's auth.json
or models.json). The crontab line holds only the two paths. What a run prints goes to <agentDir>/schedules/NAME.log.

Needs cron: the crontab command and a running cron daemon (subagents doctor checks both).`;

export const SCHEDULE_LIST_HELP = `Usage: subagents schedule list [--json]

Lists the schedules: when, what, where, and their last run (completed, error, or skipped because the one before
was still going). Also says what is wrong: no cron daemon, a definition whose crontab line is gone, a crontab
line of ours whose definition is gone.

Options:
  --json   One JSON object per line: {"type":"schedule","name","cron","cwd","args","inCrontab","last",...}`;

export const SCHEDULE_RM_HELP = `Usage: subagents schedule rm NAME

Removes the schedule's line from your crontab (only the line tagged "# subagents:NAME") and its definition. Its
recorded runs stay in the session store, and its log file is kept.`;

export const SCHEDULE_RUN_HELP = `Usage: subagents schedule run NAME

Runs the schedule now, once, as cron would: in its folder, with the environment it keeps (cron's own HOME, USER,
SHELL and nothing else of this shell), recorded under its name. A run of it still going makes this one skip
(recorded as skipped; exit 1). Its exit code is the command's. cron calls it with --from-cron (timestamps on its
log lines; a skip exits 0).`;
