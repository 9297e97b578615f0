// Every command's flags, listed once, in the order --help shows them: each command parses with its list
// (parseOptions), its --help prints the list (optionsBlock) and `subagents completion` offers it. A flag added here
// is parsed, documented in --help and completed; docs/cli.md must then name it (test/e2e/docs.test.ts checks).
import type { Flag } from "./flag.ts";

const NO_COLOR = { name: "no-color", help: "No colours (also NO_COLOR=1)" } as const satisfies Flag;
const GATE_RETRIES = {
  name: "gate-retries",
  value: "N",
  help: "Corrections the gate's output gets before GATE_FAILED (default 2)",
} as const satisfies Flag;
const GATE_TIMEOUT = {
  name: "gate-timeout",
  value: "S",
  help: "Seconds one gate run may take (default 300)",
} as const satisfies Flag;

/** What `delegate` and `run` share beyond their own wording: the budgets per task and the gate's limits. */
const BUDGETS = (whose: string) =>
  [
    {
      name: "max-turns",
      value: "N",
      help: `Budget${whose}: model turns (then one wrap-up turn, then BUDGET_EXCEEDED)`,
    },
    { name: "max-tokens", value: "N", help: `Budget${whose}: tokens read and written, cache included` },
    { name: "max-cost", value: "USD", help: `Budget${whose}: dollars, as pi prices the model` },
  ] as const satisfies Flag[];

export const DELEGATE_FLAGS = [
  {
    name: "name",
    value: "NAME",
    multiple: true,
    help: "Name of the next task (repeat once per task; default task-1, task-2, …)",
  },
  { name: "profile", value: "P", help: "Profile for every task (default: pi's defaults)" },
  { name: "cwd", value: "DIR", help: "Working directory for every task (default: current directory)" },
  {
    name: "timeout",
    value: "S",
    help: "Seconds after which a task is stopped once it makes no new tool call (default 600)",
  },
  { name: "concurrency", value: "N", help: "Tasks at once, 1–16 (default 4, setting subagents.concurrency)" },
  { name: "file", value: "PATH", multiple: true, help: "Prepend this file to every task's prompt (repeatable)" },
  {
    name: "model",
    value: "M",
    help: 'Model for every task, "provider/id" or "provider/id:thinking" (overrides profiles)',
  },
  { name: "resume", value: "ID", help: "Continue session ID with the (single) task given" },
  ...BUDGETS(" per task"),
  {
    name: "max-total-cost",
    value: "USD",
    help: "Budget for the whole call: running tasks wrap up, queued ones do not start",
  },
  {
    name: "tasks",
    value: "FILE|-",
    help: 'Read tasks as delegate_to_subagents JSON or YAML: {"tasks":[{"name","prompt",...}],"profile"?} (a task may wait for others: "after": ["scout"], and use "{{scout}}" = its output)',
  },
  {
    name: "isolation",
    value: "worktree",
    help: "Each task isolated: a layer over the repository at its own path (every file, ignored ones too), started from what you see; its changes end on its own branch, listed at the end with files, diffstat and files that several tasks changed (also a task field). subagents.setup runs in it first (docs/composing.md)",
  },
  { name: "sandbox", help: 'Each task in the sandbox (bubblewrap; also a task field "sandbox": true)' },
  {
    name: "runner",
    value: "R",
    help: 'Where the children run: local (default), docker, slurm (also a task field "runner")',
  },
  {
    name: "runtime",
    value: "R",
    help: 'Which CLI runs them: pi (default), claude-code, codex, gemini, opencode (also a task field "runtime")',
  },
  {
    name: "fork",
    value: "SESSION",
    help: 'Start every task from a copy of this pi session\'s conversation (a session file, or its id under <agentDir>/sessions), without the sub-agent tools\' traffic (also a task field "context": "fork")',
  },
  {
    name: "gate",
    value: "CMD",
    help: 'Acceptance check for every task: a shell command that must exit 0 in the task\'s folder before the task counts as completed; its output goes back to the child as a correction (also task fields "gate", "gateRetries", "gateTimeout")',
  },
  GATE_RETRIES,
  GATE_TIMEOUT,
  { name: "json", help: 'JSON lines on stdout (human text on stderr); the last line is {"type":"summary",...}' },
  { name: "quiet", short: "q", help: "Only the final status lines and outputs" },
  {
    name: "background",
    help: "Start the tasks under a detached supervisor and return once it has taken them on, with their session ids (--json: one line per task, then a summary); collect with 'subagents wait ID…'",
  },
  NO_COLOR,
] as const satisfies Flag[];

export const RUN_FLAGS = [
  {
    name: "name",
    value: "NAME",
    help: "The task's name (its window, its session, an isolated task's branch subagents/<name>-<id>; default: the agent's)",
  },
  { name: "session", value: "ID", help: "Continue an earlier session (the child keeps its full context)" },
  { name: "cwd", value: "DIR", help: "Working directory for the child (default: current directory)" },
  {
    name: "model",
    value: "M",
    help: 'Model for the child, "provider/id" or "provider/id:thinking" (overrides the profile)',
  },
  {
    name: "timeout",
    value: "S",
    help: "Seconds after which the child is stopped once it makes no new tool call (default 600)",
  },
  ...BUDGETS(""),
  { name: "json", help: 'Print JSON lines on stdout; the last line is {"type":"summary",...}' },
  {
    name: "background",
    help: "Start it under a detached supervisor and return once it has taken it on, with its session id",
  },
  {
    name: "fork",
    value: "SESSION",
    help: "Start the task from a copy of this pi session's conversation (a session file, or its id under <agentDir>/sessions), without the sub-agent tools' traffic",
  },
  {
    name: "gate",
    value: "CMD",
    help: "Acceptance check: a shell command that must exit 0 in the task's folder before the task counts as completed; its output goes back to the child as a correction",
  },
  GATE_RETRIES,
  GATE_TIMEOUT,
  {
    name: "isolation",
    value: "worktree",
    help: "Run isolated: a layer over the repository at its own path, started from what you see (every file, ignored ones too: node_modules, .venv, build info); changes end on a branch subagents/<name>-<id> (see 'subagents help apply'); a directory outside git fails (ISOLATION_FAILED). subagents.setup runs in it first (docs/composing.md)",
  },
  {
    name: "sandbox",
    help: "Run the child in the sandbox (bubblewrap): it writes a layer over its folder and you get back its plain files (not its git data, links out, or tools' config); filesystem read-only otherwise, home hidden except pi's settings; see docs/sandbox-runners.md",
  },
  {
    name: "runner",
    value: "R",
    help: "Where the child runs: local (default), docker (a container), slurm (a job step)",
  },
  {
    name: "runtime",
    value: "R",
    help: 'Which CLI runs it: pi (default), claude-code, codex, gemini, opencode (the agent file\'s "runtime"); see docs/agents.md',
  },
  { name: "quiet", short: "q", help: "No progress lines, only the final status line" },
  NO_COLOR,
] as const satisfies Flag[];

const RECORD_FLAGS = (json: string) => [{ name: "json", help: json }, NO_COLOR] as const satisfies Flag[];
export const OUTPUT_FLAGS = RECORD_FLAGS('One JSON object: {"type":"output","sessionId","status","output",...}');
export const SESSION_FLAGS = RECORD_FLAGS("One JSON object with the transcript as the sub-agent tools return it");

export const SESSIONS_FLAGS = [
  { name: "limit", value: "N", help: "How many (default 20)" },
  { name: "running", help: "Only sessions still running or queued, with the process that owns them (pid, role)" },
  { name: "wide", short: "w", help: "Every column (adds RUNS, TOKENS IN/OUT/CACHE, TIME and CWD), never shortened" },
  { name: "json", help: "One JSON object per line" },
  NO_COLOR,
] as const satisfies Flag[];

export const PROFILES_FLAGS = [
  {
    name: "all",
    label: "--all, -v, --verbose",
    help: "Each profile's harness, file, description, memory file and every warning, plus the files that are not agents (no front matter or no description, documentation files)",
  },
  { name: "verbose", short: "v", hidden: true, help: "The same as --all" },
  {
    name: "json",
    help: 'One JSON object per line: {"type":"profile", name, source, harness, runtime, filePath, memoryFile?, runsOn, warnings, …}, then "shadowed", "diagnostic" (and with --all "skipped") lines',
  },
  { name: "check", help: "Exit 1 if any agent file has an error (for a collection's CI)" },
  { name: "cwd", value: "DIR", help: "Look from DIR instead of the current directory" },
] as const satisfies Flag[];

export const DEMO_FLAGS = [
  { name: "json", help: "JSON lines on stdout, as delegate --json prints them" },
  { name: "quiet", short: "q", help: "Only the final status lines and outputs" },
  NO_COLOR,
] as const satisfies Flag[];

export const INSTALL_FLAGS = [
  { name: "uninstall", help: "Remove the extension again" },
  { name: "bin", help: "Copy this executable to DIR (--prefix DIR, default ~/.local/bin)" },
  { name: "prefix", value: "DIR", help: "Where --bin puts it (default ~/.local/bin)" },
] as const satisfies Flag[];

export const DOCTOR_FLAGS = [
  { name: "cwd", value: "DIR", help: "Check as if run from DIR (project profiles and settings)" },
  { name: "json", help: 'One JSON object: {"ok":bool,"checks":[{"name","status":"ok|warn|fail","detail","fix"?}]}' },
] as const satisfies Flag[];

export const USAGE_FLAGS = [
  { name: "since", value: "AGE", help: "Runs started in the last AGE: 7d (default), 12h, 90m, 2w" },
  { name: "by", value: "agent|day|folder", help: "One row per agent (default), day or working folder" },
  {
    name: "json",
    help: 'One JSON object per row: {"type":"usage","by","key","sessions","runs","failed","input","output","cacheRead","cacheWrite","cost","durationMs"}',
  },
  NO_COLOR,
] as const satisfies Flag[];

export const PRUNE_FLAGS = [
  {
    name: "older-than",
    value: "AGE",
    help: "Only sessions last active more than AGE ago: 30d, 12h, 90m, 2w (default 30d, unless only --keep is given)",
  },
  { name: "keep", value: "N", help: "Always keep the N most recent sessions" },
  { name: "dry-run", help: "List what would be deleted; change nothing" },
  {
    name: "json",
    help: 'One JSON object: {"dryRun","sessions":[{"id","name",...}],"files","logs","worktrees":[{"id","path","repo","action":"keep" or "discard","branch","error"}],"worktreeLeftovers","compiledPis":[{"dir","bytes"}],"keptCompiledPis":[{"dir","why"}],"tempDirs","bytesBefore","bytesAfter"}',
  },
] as const satisfies Flag[];

export const APPLY_FLAGS = [
  { name: "cherry-pick", help: "Cherry-pick the sub-agent's commits instead of merging the branch" },
  { name: "cwd", value: "DIR", help: "The repository to apply to (default: current directory)" },
  {
    name: "abort",
    help: "Undo an apply that was stopped midway (killed, its terminal closed): its files back as HEAD had them, or git's merge/cherry-pick aborted",
  },
] as const satisfies Flag[];

export const WAIT_FLAGS = [
  { name: "timeout", value: "S", help: "give up after S seconds (exit 124); the sessions keep running" },
  { name: "json", help: "JSON output (the same summary line as 'delegate --json')" },
] as const satisfies Flag[];

export const LOGS_FLAGS = [
  {
    name: "follow",
    short: "f",
    help: "Keep printing new lines until the run ends (Ctrl-C stops following, not the run)",
  },
] as const satisfies Flag[];

export const ATTACH_FLAGS = [NO_COLOR] as const satisfies Flag[];
export const CANCEL_FLAGS = [{ name: "all", help: "Every session any live owner still has" }] as const satisfies Flag[];

export const SCHEDULE_ADD_FLAGS = [
  {
    name: "cron",
    value: "EXPR",
    help: 'When: five fields, minute hour day-of-month month day-of-week (e.g. "*/15 * * * *", "0 3 * * 1-5"), names for months and weekdays, or @hourly, @daily, @weekly, @monthly, @yearly. Times are the machine\'s local time, as cron reads them.',
  },
  { name: "cwd", value: "DIR", help: "The folder it runs in (default: the current one)" },
] as const satisfies Flag[];
export const SCHEDULE_LIST_FLAGS = [
  {
    name: "json",
    help: 'One JSON object per line: {"type":"schedule","name","cron","cwd","args","inCrontab","last",...}',
  },
] as const satisfies Flag[];
export const SCHEDULE_RUN_FLAGS = [
  { name: "from-cron", hidden: true, help: "How cron calls it: timestamps on its log lines; a skip exits 0" },
] as const satisfies Flag[];

export const MCP_FLAGS = [
  {
    name: "cwd",
    value: "DIR",
    help: "The folder tasks run in unless they say otherwise (default: the current directory)",
  },
] as const satisfies Flag[];

/** `batch ITEMS`: what every item runs with, the job's own limits, and where the results go. */
export const BATCH_FLAGS = [
  { name: "prompt", value: "TEXT", help: "The prompt template: {{column}} takes the item's value ({{id}}: its id)" },
  { name: "prompt-file", value: "FILE", help: "Read the template from FILE (instead of --prompt)" },
  { name: "agent", value: "NAME", help: "The agent every item runs as (default: pi's defaults)" },
  {
    name: "out",
    value: "FILE",
    help: "One JSON line per finished item as it finishes (id, status, result, data, error, attempts, sessionId, usage, cost); after a resumed run it holds exactly one line per finished item",
  },
  { name: "id", value: "KEY", help: "The field (column) that names an item (default id; else its line number)" },
  {
    name: "job",
    value: "NAME",
    help: "The job's name (default: derived from the items file and the prompt); the same name resumes it",
  },
  { name: "concurrency", value: "N", help: "Items at once, 1–64 (default 4, setting subagents.concurrency)" },
  {
    name: "max-attempts",
    value: "N",
    help: "Attempts per item for failures worth retrying: provider errors, rate limits, timeouts (default 3)",
  },
  {
    name: "max-cost",
    value: "USD",
    help: "Budget for the whole job, its earlier runs included: no item starts once it is spent (running ones wrap up)",
  },
  { name: "shard", value: "I/N", help: "Only the items whose id hashes to shard I of N (a job of its own)" },
  { name: "retry-failed", help: "Run the failed items again too, with fresh attempts" },
  { name: "cwd", value: "DIR", help: "Working directory for every item (default: current directory)" },
  { name: "model", value: "M", help: 'Model for every item, "provider/id" or "provider/id:thinking"' },
  {
    name: "timeout",
    value: "S",
    help: "Seconds after which an item is stopped once it makes no new tool call (default 600)",
  },
  {
    name: "output-schema",
    value: "FILE",
    help: "JSON Schema of each item's structured result (a file, or the JSON itself): the item's data",
  },
  { name: "max-turns", value: "N", help: "Budget per item: model turns" },
  { name: "max-tokens", value: "N", help: "Budget per item: tokens read and written, cache included" },
  { name: "max-item-cost", value: "USD", help: "Budget per item: dollars" },
  {
    name: "gate",
    value: "CMD",
    help: "Acceptance check for every item: a shell command that must exit 0 in the item's folder",
  },
  GATE_RETRIES,
  GATE_TIMEOUT,
  {
    name: "isolation",
    value: "worktree",
    help: "Each item isolated: a layer over the repository, its changes on a branch (docs/composing.md)",
  },
  { name: "sandbox", help: "Each item in the sandbox (bubblewrap)" },
  { name: "runner", value: "R", help: "Where the items run: local (default), docker, slurm" },
  { name: "runtime", value: "R", help: "Which CLI runs them: pi (default), claude-code, codex, gemini, opencode" },
  {
    name: "background",
    help: "Start the job in a detached process and return once it is recorded, with its id (follow it with 'subagents batch status JOB')",
  },
  {
    name: "json",
    help: 'JSON lines on stdout: {"type":"job",...} when it starts, {"type":"summary","job",...} at the end',
  },
  { name: "quiet", short: "q", help: "No progress, only the final line" },
  NO_COLOR,
] as const satisfies Flag[];

export const BATCH_STATUS_FLAGS = [
  {
    name: "json",
    help: 'One JSON object: {"job","status","counts":{pending,running,completed,failed,total},"cost","rate","etaSec",...}',
  },
] as const satisfies Flag[];

export const BATCH_EXPORT_FLAGS = [
  { name: "csv", help: "CSV with a header row instead of JSON lines" },
  { name: "all", help: "Every item, pending and running ones too (default: the finished ones)" },
] as const satisfies Flag[];

export const BATCH_SUBMIT_FLAGS = [
  { name: "slurm", value: "N", help: "Submit a Slurm array job of N shards (required)" },
  { name: "partition", value: "P", help: "The Slurm partition (default: the cluster's default)" },
  ...BATCH_FLAGS.filter((f) => !["background", "shard", "json", "quiet", "no-color"].includes(f.name)),
  { name: "json", help: 'One JSON object: {"job","slurmJob","shards","out","script"}' },
] as const satisfies Flag[];

export const BATCH_MERGE_FLAGS = [
  { name: "out", value: "FILE", help: "Where the merged lines go (required)" },
  { name: "job", value: "NAME", help: "Merge the result files of this submitted job (instead of FILE…)" },
  { name: "wait", help: "With --job: wait until its Slurm job has ended" },
] as const satisfies Flag[];

/** Every command's flags (and the words completion offers after it: a subcommand, a shell). */
export const COMMAND_FLAGS: Record<string, { flags: readonly Flag[]; words?: string[] }> = {
  delegate: { flags: DELEGATE_FLAGS },
  // A workflow is a delegate call read from a file: the same flags.
  flow: { flags: DELEGATE_FLAGS },
  run: { flags: RUN_FLAGS },
  output: { flags: OUTPUT_FLAGS },
  session: { flags: SESSION_FLAGS },
  sessions: { flags: SESSIONS_FLAGS },
  profiles: { flags: PROFILES_FLAGS },
  demo: { flags: DEMO_FLAGS },
  install: { flags: INSTALL_FLAGS },
  doctor: { flags: DOCTOR_FLAGS },
  prune: { flags: PRUNE_FLAGS },
  usage: { flags: USAGE_FLAGS },
  apply: { flags: APPLY_FLAGS },
  completion: { flags: [], words: ["bash", "zsh", "fish"] },
  wait: { flags: WAIT_FLAGS },
  steer: { flags: [] },
  answer: { flags: [] },
  cancel: { flags: CANCEL_FLAGS },
  logs: { flags: LOGS_FLAGS },
  attach: { flags: ATTACH_FLAGS },
  schedule: {
    flags: [...SCHEDULE_ADD_FLAGS, ...SCHEDULE_LIST_FLAGS, ...SCHEDULE_RUN_FLAGS],
    words: ["add", "list", "rm", "run"],
  },
  mcp: { flags: MCP_FLAGS },
  batch: {
    flags: [...BATCH_FLAGS, ...BATCH_STATUS_FLAGS, ...BATCH_EXPORT_FLAGS, ...BATCH_SUBMIT_FLAGS, ...BATCH_MERGE_FLAGS],
    words: ["status", "export", "submit", "merge"],
  },
};
