// The store's writes: every one inside BEGIN IMMEDIATE (a deferred read-then-write transaction fails under
// contention), retried while another process holds the write lock past busy_timeout; and its migrations.
import type { Db } from "../host.ts";
import { MIGRATIONS } from "./store-schema.ts";
import { newerSchema } from "./store-error.ts";

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Runs fn in BEGIN IMMEDIATE; retries when another process holds the write lock past busy_timeout. */
export function writeTx<T>(db: Db, fn: () => T): T {
  for (let attempt = 0; ; attempt++) {
    try {
      db.exec("BEGIN IMMEDIATE");
    } catch (err) {
      if (attempt < 20 && /busy|locked/i.test(String((err as Error).message))) {
        sleepSync(5 + attempt * 10);
        continue;
      }
      throw err;
    }
    try {
      const out = fn();
      db.exec("COMMIT");
      return out;
    } catch (err) {
      try {
        db.exec("ROLLBACK");
      } catch {
        // already rolled back
      }
      throw err;
    }
  }
}

/** Brings the database to the newest schema (PRAGMA user_version counts the migrations applied); one written by a
 *  newer subagents is refused (its rows may mean what this one does not know). */
export function migrate(db: Db, file: string): void {
  const version = db.get<{ user_version: number }>("PRAGMA user_version")?.user_version ?? 0;
  if (version > MIGRATIONS.length) throw newerSchema(file, version, MIGRATIONS.length);
  if (version === MIGRATIONS.length) return;
  writeTx(db, () => {
    // Re-read inside the lock: another process may have migrated meanwhile.
    const current = db.get<{ user_version: number }>("PRAGMA user_version")?.user_version ?? 0;
    if (current > MIGRATIONS.length) throw newerSchema(file, current, MIGRATIONS.length);
    for (let v = current; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]);
    db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
  });
}
