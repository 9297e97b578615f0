// The session database's schema (migrations by PRAGMA user_version, each step one entry) and how its rows read
// back as records.
import type { RunnerName } from "../runner-settings.ts";
import { emptyUsage } from "../types.ts";
import type { RunRecord } from "./store-types.ts";

export const MIGRATIONS = [
  `CREATE TABLE sessions (
     id TEXT PRIMARY KEY, name TEXT NOT NULL, agent TEXT NOT NULL, cwd TEXT NOT NULL, status TEXT NOT NULL,
     session_file TEXT, parent_session TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
   CREATE INDEX sessions_updated ON sessions(updated_at DESC);
   CREATE TABLE runs (
     id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
     seq INTEGER NOT NULL, prompt TEXT NOT NULL, status TEXT NOT NULL, exit_code INTEGER, model TEXT, usage TEXT,
     error TEXT, error_code TEXT, output TEXT NOT NULL DEFAULT '', finalize TEXT, tool_count INTEGER NOT NULL DEFAULT 0,
     started_at INTEGER NOT NULL, ended_at INTEGER, owner_pid INTEGER, message_count INTEGER NOT NULL DEFAULT 0);
   CREATE INDEX runs_session ON runs(session_id, seq);
   CREATE INDEX runs_running ON runs(status) WHERE status = 'running';
   CREATE TABLE messages (
     run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, seq INTEGER NOT NULL, role TEXT NOT NULL,
     text TEXT NOT NULL, tool_calls TEXT, name TEXT, is_error INTEGER, error TEXT, PRIMARY KEY (run_id, seq));`,
  // Which pi ran the child (version · runtime · package): runs can differ across pi upgrades and settings.
  `ALTER TABLE runs ADD COLUMN pi TEXT;`,
  // Whether the child called subagent_finalize (null: recorded before this was tracked, or still running).
  `ALTER TABLE runs ADD COLUMN finalized INTEGER;`,
  // Agent-file compromises of a run (model fallback, missing tools), as a JSON list.
  `ALTER TABLE runs ADD COLUMN warnings TEXT;`,
  // An isolated run's branch, changed files and diffstat, as JSON.
  `ALTER TABLE runs ADD COLUMN isolation TEXT;`,
  // Every spawn and cost cap check counts one parent's children: without this it scanned every session.
  // Where a run ran (sandboxed or not, which runner), so a resumed session runs the same way.
  `CREATE INDEX sessions_parent ON sessions(parent_session) WHERE parent_session IS NOT NULL;
   ALTER TABLE runs ADD COLUMN sandbox INTEGER;
   ALTER TABLE runs ADD COLUMN runner TEXT;`,
  // The schedule (`subagents schedule`) that started a session, so a morning's list says which runs were whose.
  `ALTER TABLE sessions ADD COLUMN schedule TEXT;`,
  // Tasks are recorded when their call accepts them (status 'queued'): every store that opens looks for queued runs
  // whose owner is gone (recoverStale), as it does for running ones. Older builds read 'queued' as a status too.
  `CREATE INDEX runs_queued ON runs(status) WHERE status = 'queued';`,
  // The owner's start time beside its PID: a PID the kernel handed to another process is not the owner.
  `ALTER TABLE runs ADD COLUMN owner_start TEXT;`,
  // Batch jobs (`subagents batch`): a job and one row per item, recorded before any item starts, so the same command
  // run again resumes it (core/store/batch-records.ts). `key` stands for what the item's result depends on (its
  // prompt, agent, model and schema); `pass` is the job's run that last read the item from its file.
  `CREATE TABLE batch_jobs (
     id TEXT PRIMARY KEY, items TEXT NOT NULL, spec TEXT NOT NULL, status TEXT NOT NULL, pass INTEGER NOT NULL DEFAULT 0,
     owner_pid INTEGER, owner_start TEXT, slurm TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
     started_at INTEGER);
   CREATE TABLE batch_items (
     job_id TEXT NOT NULL REFERENCES batch_jobs(id) ON DELETE CASCADE, item_id TEXT NOT NULL, seq INTEGER NOT NULL,
     key TEXT NOT NULL, prompt TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
     pass INTEGER NOT NULL, session_id TEXT, result TEXT, data TEXT, error TEXT, error_code TEXT, usage TEXT,
     cost REAL NOT NULL DEFAULT 0, started_at INTEGER, ended_at INTEGER, PRIMARY KEY (job_id, item_id));
   CREATE INDEX batch_items_todo ON batch_items(job_id, status, seq);
   CREATE INDEX batch_items_order ON batch_items(job_id, seq);`,
];

/** The schema this build writes (PRAGMA user_version after migrating): `doctor` reports it. */
export const SCHEMA_VERSION = MIGRATIONS.length;

export type RunRow = {
  id: number;
  session_id: string;
  seq: number;
  prompt: string;
  status: string;
  exit_code: number | null;
  model: string | null;
  usage: string | null;
  error: string | null;
  error_code: string | null;
  output: string;
  finalize: string | null;
  finalized: number | null;
  tool_count: number;
  started_at: number;
  ended_at: number | null;
  owner_pid: number | null;
  owner_start: string | null;
  message_count: number;
  pi: string | null;
  warnings: string | null;
  isolation: string | null;
  sandbox: number | null;
  runner: string | null;
};

export type SessionRow = {
  id: string;
  name: string;
  agent: string;
  cwd: string;
  status: string;
  session_file: string | null;
  parent_session: string | null;
  schedule: string | null;
  created_at: number;
  updated_at: number;
};

export function toRun(r: RunRow): RunRecord {
  return {
    id: r.id,
    seq: r.seq,
    prompt: r.prompt,
    status: r.status as RunRecord["status"],
    exitCode: r.exit_code,
    model: r.model ?? undefined,
    usage: r.usage ? JSON.parse(r.usage) : emptyUsage(),
    error: r.error ?? undefined,
    errorCode: (r.error_code ?? undefined) as RunRecord["errorCode"],
    output: r.output,
    finalize: r.finalize ? JSON.parse(r.finalize) : undefined,
    ...(r.finalized === null ? {} : { finalized: r.finalized === 1 }),
    toolCount: r.tool_count,
    startedAt: r.started_at,
    endedAt: r.ended_at ?? undefined,
    ownerPid: r.owner_pid,
    ownerStart: r.owner_start ?? null,
    messageCount: r.message_count,
    pi: r.pi ?? undefined,
    ...(r.warnings ? { warnings: JSON.parse(r.warnings) as string[] } : {}),
    ...(r.isolation ? { isolation: JSON.parse(r.isolation) } : {}),
    ...(r.sandbox === null ? {} : { sandbox: r.sandbox === 1 }),
    ...(r.runner ? { runner: r.runner as RunnerName } : {}),
  };
}
