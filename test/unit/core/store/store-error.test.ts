// Storage failures as one typed error (core/store/store-error.ts): what SQLite and the file system say becomes one
// line naming the database and a code; a newer schema is refused; the store's probe and short record.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SCHEMA_VERSION, Store } from "../../../../src/core/store/store.ts";
import { StoreError, storeError } from "../../../../src/core/store/store-error.ts";
import { emptyUsage } from "../../../../src/core/types.ts";
import { bunDbOpener } from "../../../../src/host/sqlite-bun.ts";

const open = bunDbOpener(Database);
const dbFile = () => join(mkdtempSync(join(tmpdir(), "subagents-store-error-")), "s.db");
const F = "/data/subagents.db";
const sqlite = (code: string, message: string) => Object.assign(new Error(message), { code });

test.each([
  [sqlite("SQLITE_FULL", "database or disk is full"), "DISK_FULL", `disk full: cannot write the session database ${F}`],
  [Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }), "DISK_FULL", "disk full"],
  [
    sqlite("SQLITE_READONLY", "attempt to write a readonly database"),
    "STORE_FAILED",
    `the session database ${F} cannot be written by this user (attempt to write a readonly database)`,
  ],
  [sqlite("SQLITE_NOTADB", "file is not a database"), "STORE_FAILED", `the session database ${F} is damaged`],
  [sqlite("SQLITE_BUSY", "database is locked"), "STORE_FAILED", "stayed locked by another process"],
  [sqlite("SQLITE_CANTOPEN", "unable to open database file"), "STORE_FAILED", `cannot open the session database ${F}`],
  [new Error("something else\n    at frame"), "STORE_FAILED", `the session database ${F} failed: something else`],
] as const)("%s → %s, one line naming the file", (err, code, text) => {
  const e = storeError(err, F);
  expect(e).toBeInstanceOf(StoreError);
  expect(e.code).toBe(code);
  expect(e.message).toContain(text);
  expect(e.message).not.toContain("\n");
});

test("a database written by a newer subagents is refused, naming both schemas, and left as it was", () => {
  const file = dbFile();
  const db = open(file);
  new Store(db, { isAlive: () => true, file });
  db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 3}`);
  let err: unknown;
  try {
    new Store(open(file), { isAlive: () => true, file });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(StoreError);
  expect((err as StoreError).message).toBe(
    `the session database ${file} was written by a newer subagents (schema ${SCHEMA_VERSION + 3}; this one knows up to ${SCHEMA_VERSION}): update subagents, or set SUBAGENTS_DB to a file you can write`,
  );
  expect(db.get<{ user_version: number }>("PRAGMA user_version")!.user_version).toBe(SCHEMA_VERSION + 3);
});

test("checkWritable: a writable database passes and keeps nothing of the probe; one that may only be read fails", () => {
  const file = dbFile();
  const db = open(file);
  const s = new Store(db, { isAlive: () => true, file });
  s.checkWritable();
  expect(db.get("SELECT name FROM sqlite_master WHERE name = 'write_probe'")).toBeUndefined();
  db.exec("PRAGMA query_only = 1");
  expect(() => s.checkWritable()).toThrow(/cannot be written by this user/);
  // Reads still work: `sessions` and `output` on a database this user may only read.
  expect(s.listSessions({ limit: 5 })).toEqual([]);
});

test("failRun: a short record of why a run's end did not fit, after giving back the reserve", () => {
  let released = 0;
  const s = new Store(open(dbFile()), { isAlive: () => true, release: () => released++ });
  const id = s.newSessionId();
  s.createSession({ id, name: "t", agent: "a", cwd: "/" });
  const run = s.startRun(id, { prompt: "p", ownerPid: process.pid, ownerStart: "123" });
  expect(s.getSession(id)!.runs[0].ownerStart).toBe("123");
  s.failRun(run, "this run's result could not be recorded: disk full: …", "DISK_FULL");
  expect(released).toBe(1);
  const r = s.getSession(id)!;
  expect(r.status).toBe("error");
  expect(r.runs[0]).toMatchObject({ status: "error", errorCode: "DISK_FULL", usage: emptyUsage() });
  expect(r.runs[0].error).toContain("disk full");
});
