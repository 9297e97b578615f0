// `subagents prune`'s side of the store: which sessions may go, deleting them, and giving the space back.
import type { Db } from "../host.ts";
import type { PruneCandidate } from "./store-types.ts";

/**
 * Sessions `subagents prune` may delete, oldest last: all but the newest `keep`, and of those only the ones
 * last updated before `before` (when given). Sessions with a running or queued run are never candidates.
 */
export function prunable(db: Db, opts: { before?: number; keep?: number }): PruneCandidate[] {
  const rows = db.all<PruneCandidate & { running: number }>(
    `SELECT s.id, s.name, s.agent, s.cwd, s.session_file AS sessionFile, s.updated_at AS updatedAt,
            (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id) AS runCount,
            EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status IN ('running', 'queued')) AS running
       FROM sessions s ORDER BY s.updated_at DESC, s.rowid DESC`,
  );
  return rows
    .slice(opts.keep ?? 0)
    .filter((r) => !r.running && (opts.before === undefined || r.updatedAt < opts.before))
    .map(({ running: _, ...r }) => ({ ...r, sessionFile: r.sessionFile ?? undefined }));
}

/** Deletes these sessions with their runs and messages (inside the caller's write); a running or queued one is kept. */
export function deleteSessions(db: Db, ids: string[]): string[] {
  return ids.filter((id) => {
    if (db.get("SELECT 1 AS x FROM runs WHERE session_id = ? AND status IN ('running', 'queued')", [id])) return false;
    db.run("DELETE FROM messages WHERE run_id IN (SELECT id FROM runs WHERE session_id = ?)", [id]);
    db.run("DELETE FROM runs WHERE session_id = ?", [id]);
    return db.run("DELETE FROM sessions WHERE id = ?", [id]).changes > 0;
  });
}

/** Gives the space of deleted rows back to the file system (outside any transaction). */
export function vacuum(db: Db): void {
  db.exec("VACUUM");
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}
