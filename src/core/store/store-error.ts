// Storage failures as one typed error, raised where the store meets them: a read-only or foreign-owned database, a
// full disk, a damaged file, one written by a newer subagents. It carries a refusal's shape ({code, message}) so every
// front only renders it — the CLI as one line and exit 2, pi's tools as an error result, a supervisor in its log —
// and a task that cannot be recorded fails with its code instead of running unrecorded.
import type { Db } from "../host.ts";
import type { ErrorCode } from "../types.ts";

export type StoreErrorCode = Extract<ErrorCode, "STORE_FAILED" | "DISK_FULL">;

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "StoreError";
  }
}

const SET_DB = "or set SUBAGENTS_DB to a file you can write";

/** Whether an error (SQLite's, or a file system call's) says the disk is full. */
export const isDiskFull = (err: unknown): boolean =>
  /SQLITE_FULL|disk is full|ENOSPC|no space left/i.test(describe(err));

const describe = (err: unknown) => `${(err as { code?: string })?.code ?? ""} ${(err as Error)?.message ?? err}`;

/** SQLite's own word for a write the file system refused: on a full disk it is often this, not SQLITE_FULL (the
 *  WAL's shared memory file cannot grow, a journal cannot be made). */
const IO_ERROR = /IOERR|disk I\/O error/i;

/** The one-line error for what the session database `file` failed with; `free` (bytes free where it lives) tells a
 *  full disk behind SQLite's "disk I/O error". */
export function storeError(err: unknown, file: string, free?: () => number | null): StoreError {
  if (err instanceof StoreError) return err;
  const text = describe(err);
  const cause = String((err as Error)?.message ?? err).split("\n")[0];
  if (isDiskFull(err) || (IO_ERROR.test(text) && (free?.() ?? Number.POSITIVE_INFINITY) < MIN_FREE_BYTES))
    return new StoreError("DISK_FULL", `disk full: cannot write the session database ${file}`);
  if (/READONLY|readonly|EROFS|EACCES|EPERM|permission denied/i.test(text))
    return new StoreError(
      "STORE_FAILED",
      `the session database ${file} cannot be written by this user (${cause}): make it writable, ${SET_DB}`,
    );
  if (/NOTADB|CORRUPT|malformed|not a database/i.test(text))
    return new StoreError(
      "STORE_FAILED",
      `the session database ${file} is damaged (${cause}): move it aside (a new one is made), ${SET_DB}`,
    );
  if (/BUSY|locked/i.test(text))
    return new StoreError("STORE_FAILED", `the session database ${file} stayed locked by another process (${cause})`);
  if (/CANTOPEN|unable to open|ENOENT|ENOTDIR|EEXIST/i.test(text))
    return new StoreError(
      "STORE_FAILED",
      `cannot open the session database ${file} (${cause}): check its folder, ${SET_DB}`,
    );
  return new StoreError("STORE_FAILED", `the session database ${file} failed: ${cause}`);
}

/** A database written by a newer subagents: its rows may mean what this one does not know. */
export function newerSchema(file: string, found: number, known: number): StoreError {
  return new StoreError(
    "STORE_FAILED",
    `the session database ${file} was written by a newer subagents (schema ${found}; this one knows up to ${known}): update subagents, ${SET_DB}`,
  );
}

/** Below this much free space a call is refused before anything starts: its records would not fit. */
export const MIN_FREE_BYTES = 1024 * 1024;

export function tooFull(file: string, free: number): StoreError {
  return new StoreError(
    "DISK_FULL",
    `disk full: ${Math.floor(free / 1024)} KB free where the session database ${file} lives; nothing was started`,
  );
}

/** The database with every failure turned into a StoreError naming `file` (a busy one still says "locked", which
 *  is what the write transaction's retry looks for). */
export function guardedDb(db: Db, file: string, free?: () => number | null): Db {
  const guard =
    <A extends unknown[], R>(fn: (...a: A) => R) =>
    (...a: A): R => {
      try {
        return fn(...a);
      } catch (err) {
        throw storeError(err, file, free);
      }
    };
  return {
    exec: guard((sql: string) => db.exec(sql)),
    run: guard((sql: string, params?: unknown[]) => db.run(sql, params)),
    get: <T>(sql: string, params?: unknown[]) => guard(() => db.get<T>(sql, params))(),
    all: <T>(sql: string, params?: unknown[]) => guard(() => db.all<T>(sql, params))(),
    close: () => db.close(),
  };
}
