// node:sqlite (Node ≥ 22.5) behind the engine's Db interface; null where this Node has none, so the caller
// can fall back to memory. Loaded lazily: importing this file must not fail on an older Node.
import type { Db } from "../core/host.ts";
import { startPragmas } from "./sqlite-pragmas.ts";
import { privateDbFile } from "./private-files.ts";

type NodeStatement = {
  run(...p: unknown[]): { changes: number | bigint };
  get(...p: unknown[]): unknown;
  all(...p: unknown[]): unknown[];
};
type NodeDatabase = { exec(sql: string): void; prepare(sql: string): NodeStatement; close(): void };

export async function loadNodeDb(): Promise<((path: string) => Db) | null> {
  let mod: { DatabaseSync: new (path: string) => NodeDatabase };
  try {
    mod = (await import("node:sqlite")) as unknown as typeof mod;
  } catch {
    return null;
  }
  return (path) => {
    privateDbFile(path);
    const db = new mod.DatabaseSync(path);
    startPragmas((sql) => db.exec(sql));
    const cache = new Map<string, NodeStatement>();
    const stmt = (sql: string) => cache.get(sql) ?? cache.set(sql, db.prepare(sql)).get(sql)!;
    return {
      exec: (sql) => db.exec(sql),
      run: (sql, params = []) => ({ changes: Number(stmt(sql).run(...params).changes) }),
      get: <T>(sql: string, params: unknown[] = []) => (stmt(sql).get(...params) as T | undefined) ?? undefined,
      all: <T>(sql: string, params: unknown[] = []) => stmt(sql).all(...params) as T[],
      close: () => db.close(),
    };
  };
}
