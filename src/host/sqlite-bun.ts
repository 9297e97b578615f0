// bun:sqlite behind the engine's Db interface (its first pragmas, and why they are retried: sqlite-pragmas.ts).
// The Database class is passed in: a static `import "bun:sqlite"` in the pi extension bundle would make it fail
// to load under Node pi, so the CLI imports it statically and the extension dynamically.
import type { Database as BunDatabase, Statement } from "bun:sqlite";
import type { Db } from "../core/host.ts";
import { startPragmas } from "./sqlite-pragmas.ts";
import { privateDbFile } from "./private-files.ts";

export const bunDbOpener =
  (Database: typeof BunDatabase) =>
  (path: string): Db => {
    privateDbFile(path);
    const db = new Database(path, { create: true });
    startPragmas((sql) => db.exec(sql));
    const cache = new Map<string, Statement>();
    const stmt = (sql: string) => {
      let s = cache.get(sql);
      if (!s) {
        s = db.prepare(sql);
        cache.set(sql, s);
      }
      return s;
    };
    type Binding = import("bun:sqlite").SQLQueryBindings;
    return {
      exec: (sql) => db.exec(sql),
      run: (sql, params = []) => ({ changes: stmt(sql).run(...(params as Binding[])).changes }),
      get: <T>(sql: string, params: unknown[] = []) =>
        (stmt(sql).get(...(params as Binding[])) as T | null) ?? undefined,
      all: <T>(sql: string, params: unknown[] = []) => stmt(sql).all(...(params as Binding[])) as T[],
      close: () => db.close(),
    };
  };
