// The pragmas every connection to our store starts with, shared by the bun:sqlite and node:sqlite openers.
// busy_timeout comes first. Even with it, switching a fresh file to WAL can fail at once with SQLITE_BUSY while
// other processes open the same file: SQLite does not wait in its busy handler where waiting could deadlock
// (measured: one in a few hundred runs of four processes opening one fresh file). That switch is retried.
const WAL_RETRY_MS = 10_000;

export function startPragmas(exec: (sql: string) => void): void {
  exec("PRAGMA busy_timeout = 10000");
  const until = Date.now() + WAL_RETRY_MS;
  for (let pause = 5; ; pause = Math.min(pause * 2, 200)) {
    try {
      exec("PRAGMA journal_mode = WAL");
      break;
    } catch (err) {
      if (
        !/SQLITE_BUSY|database is locked/i.test(`${(err as { code?: string }).code ?? ""} ${(err as Error).message}`) ||
        Date.now() > until
      )
        throw err;
      // A synchronous pause: the openers are synchronous, and this happens once per connection at most.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pause);
    }
  }
  exec("PRAGMA synchronous = NORMAL");
  exec("PRAGMA foreign_keys = ON");
}
