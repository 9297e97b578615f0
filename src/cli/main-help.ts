// `subagents --help`: kept apart from the commands' help texts (help.ts), which build their Options blocks from the
// flag lists when loaded — `--version` and `--help` load almost nothing (startup time is a goal).

export const MAIN_HELP = `subagents — run pi sub-agents: isolated child pi processes with their own context, tools and model.

Usage:
  subagents <command> [options]

Commands:
  delegate "task" ...    Run up to 16 sub-agents in parallel with live progress windows
  run AGENT "task"       Run one sub-agent with a profile and print its result
  flow [NAME "input"]    Run a saved workflow (.pi/workflows/NAME.yaml); without NAME, list them
  batch ITEMS --prompt T One prompt over every item of a .jsonl/.csv file, resumable (status, export, submit, merge)
  output ID              Print the final output of a session's latest run
  session ID             Print a session's full transcript (all runs)
  sessions               List recent sessions (--running: only those still running, with their owner)
  usage                  What sub-agents spent: tokens, cache reads, cost, time by agent, day or folder (--since 7d)
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

Exit codes: 0 success, 1 a task failed, 2 usage or configuration error, 129/130/143 stopped by a signal (SIGHUP/SIGINT/SIGTERM).
Environment: PI_CODING_AGENT_DIR (pi's agent dir, default ~/.pi/agent), SUBAGENTS_DB (session database),
SUBAGENTS_PI (command that runs pi), NO_COLOR.`;
