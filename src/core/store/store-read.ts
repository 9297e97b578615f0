// The store's reads: a session with its runs, a run's messages, the session list, a schedule's latest session and
// the session caps' count (store.ts delegates to these; they need no transaction).
import type { Db } from "../host.ts";
import type { ErrorCode, StoredMessage } from "../types.ts";
import { toRun, type RunRow, type SessionRow } from "./store-schema.ts";
import {
  NEVER_STARTED_MESSAGE,
  NOT_STARTED_CODES,
  type SessionRecord,
  type SessionSummary,
  type UsageBy,
  type UsageRow,
} from "./store-types.ts";

export function getSession(db: Db, id: string): SessionRecord | null {
  const s = db.get<SessionRow>("SELECT * FROM sessions WHERE id = ?", [id]);
  if (!s) return null;
  const runs = db.all<RunRow>("SELECT * FROM runs WHERE session_id = ? ORDER BY seq", [id]).map(toRun);
  return {
    id: s.id,
    name: s.name,
    agent: s.agent,
    cwd: s.cwd,
    status: s.status as SessionRecord["status"],
    sessionFile: s.session_file ?? undefined,
    parentSession: s.parent_session ?? undefined,
    ...(s.schedule ? { schedule: s.schedule } : {}),
    createdAt: s.created_at,
    updatedAt: s.updated_at,
    runs,
  };
}

export function getMessages(db: Db, runId: number): StoredMessage[] {
  const rows = db.all<{
    role: string;
    text: string;
    tool_calls: string | null;
    name: string | null;
    is_error: number | null;
    error: string | null;
  }>("SELECT role, text, tool_calls, name, is_error, error FROM messages WHERE run_id = ? ORDER BY seq", [runId]);
  return rows.map((r): StoredMessage => {
    if (r.role === "toolResult")
      return { role: "toolResult", name: r.name ?? "", text: r.text, isError: r.is_error === 1 };
    if (r.role === "assistant")
      return {
        role: "assistant",
        text: r.text,
        toolCalls: r.tool_calls ? JSON.parse(r.tool_calls) : [],
        ...(r.error ? { error: r.error } : {}),
      };
    return { role: "user", text: r.text };
  });
}

export function listSessions(db: Db, opts: { limit: number; offset?: number }): SessionSummary[] {
  type Row = SessionRow & {
    cost: number | null;
    input: number | null;
    output: number | null;
    cache_read: number | null;
    cache_write: number | null;
    duration: number | null;
    run_count: number;
    last_error_code: string | null;
  };
  // The page of sessions first, then its runs' sums: one pass over the page's runs, whatever the table holds.
  const rows = db.all<Row>(
    `WITH page AS (SELECT rowid AS rid, * FROM sessions ORDER BY updated_at DESC, rowid DESC LIMIT ? OFFSET ?)
     SELECT page.*, SUM(json_extract(r.usage, '$.cost')) AS cost, SUM(json_extract(r.usage, '$.input')) AS input,
            SUM(json_extract(r.usage, '$.output')) AS output, SUM(json_extract(r.usage, '$.cacheRead')) AS cache_read,
            SUM(json_extract(r.usage, '$.cacheWrite')) AS cache_write,
            SUM(r.ended_at - r.started_at) AS duration, COUNT(r.id) AS run_count,
            (SELECT error_code FROM runs l WHERE l.session_id = page.id ORDER BY l.id DESC LIMIT 1) AS last_error_code
       FROM page LEFT JOIN runs r ON r.session_id = page.id
      GROUP BY page.rid ORDER BY page.updated_at DESC, page.rid DESC`,
    [opts.limit, opts.offset ?? 0],
  );
  return rows.map((s) => ({
    id: s.id,
    name: s.name,
    agent: s.agent,
    cwd: s.cwd,
    status: s.status as SessionSummary["status"],
    cost: s.cost ?? 0,
    tokens: {
      input: s.input ?? 0,
      output: s.output ?? 0,
      cacheRead: s.cache_read ?? 0,
      cacheWrite: s.cache_write ?? 0,
    },
    durationMs: s.duration ?? 0,
    runCount: s.run_count,
    ...(s.last_error_code ? { lastErrorCode: s.last_error_code as ErrorCode } : {}),
    ...(s.schedule ? { schedule: s.schedule } : {}),
    createdAt: s.created_at,
    updatedAt: s.updated_at,
  }));
}

const USAGE_KEY: Record<UsageBy, string> = {
  agent: "s.agent",
  folder: "s.cwd",
  day: "date(r.started_at / 1000, 'unixepoch', 'localtime')",
};

/** What runs started since `since` (epoch ms) spent, by agent, day or folder, the costliest first (days in order). */
export function usageSummary(db: Db, opts: { since: number; by: UsageBy }): UsageRow[] {
  const sum = (field: string) => `COALESCE(SUM(json_extract(r.usage, '$.${field}')), 0)`;
  return db.all<UsageRow>(
    `SELECT ${USAGE_KEY[opts.by]} AS key, COUNT(DISTINCT s.id) AS sessions, COUNT(r.id) AS runs,
            SUM(r.status = 'error') AS failed, ${sum("input")} AS input, ${sum("output")} AS output,
            ${sum("cacheRead")} AS cacheRead, ${sum("cacheWrite")} AS cacheWrite, ${sum("cost")} AS cost,
            COALESCE(SUM(r.ended_at - r.started_at), 0) AS durationMs
       FROM runs r JOIN sessions s ON s.id = r.session_id
      WHERE r.started_at >= ? AND r.status != 'queued'
      GROUP BY key ORDER BY ${opts.by === "day" ? "key DESC" : "cost DESC, runs DESC, key"}`,
    [opts.since],
  );
}

/** The latest session a schedule started (`subagents schedule list`). */
export function lastOfSchedule(
  db: Db,
  schedule: string,
): { id: string; status: string; errorCode?: string; updatedAt: number } | null {
  const row = db.get<{ id: string; status: string; updated_at: number; error_code: string | null }>(
    `SELECT s.id, s.status, s.updated_at, (SELECT error_code FROM runs r WHERE r.session_id = s.id ORDER BY r.id DESC LIMIT 1) AS error_code
       FROM sessions s WHERE s.schedule = ? ORDER BY s.updated_at DESC, s.rowid DESC LIMIT 1`,
    [schedule],
  );
  return row
    ? {
        id: row.id,
        status: row.status,
        updatedAt: row.updated_at,
        ...(row.error_code ? { errorCode: row.error_code } : {}),
      }
    : null;
}

/** Children started by one parent pi session, and what the ended ones cost (the session caps). */
export function parentUsage(db: Db, parentSession: string): { spawns: number; cost: number } {
  // A run refused before its child started (the same test as startedChild) is not a spawn.
  // A queued one is not yet (the caps count it as coming), nor one that never started.
  const notStarted = `r.status = 'queued' OR r.error = ? OR (r.status = 'error' AND r.exit_code IS NULL AND COALESCE(json_extract(r.usage, '$.turns'), 0) = 0 AND r.error_code IN (${NOT_STARTED_CODES.map(() => "?").join(", ")}))`;
  const row = db.get<{ spawns: number; cost: number | null }>(
    `SELECT SUM(CASE WHEN ${notStarted} THEN 0 ELSE 1 END) AS spawns, SUM(json_extract(r.usage, '$.cost')) AS cost
       FROM runs r JOIN sessions s ON s.id = r.session_id WHERE s.parent_session = ?`,
    [NEVER_STARTED_MESSAGE, ...NOT_STARTED_CODES, parentSession],
  );
  return { spawns: row?.spawns ?? 0, cost: row?.cost ?? 0 };
}
