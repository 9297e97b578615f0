// Opening the session database, the same for every front (the CLI, pi's extension, a schedule's record): its
// folder made, the file opened and migrated, every failure a StoreError naming the file (core/store/store-error.ts),
// and the free space of its filesystem known to the call's pre-check (Store.checkWritable).
import * as fs from "node:fs";
import * as path from "node:path";
import type { Db } from "../core/host.ts";
import { Store, type StoreOptions } from "../core/store/store.ts";
import { StoreError, storeError } from "../core/store/store-error.ts";
import { freeBytes } from "./fs-parts.ts";
import { ownTag, tagAlive } from "./process-identity.ts";
import { PRIVATE_DIR, privateRecords } from "./private-files.ts";

/** What a process that runs tasks keeps in reserve beside the database: room for the short record of a run whose
 *  full end did not fit (Store.failRun), so a full disk is recorded as such instead of "interrupted". */
const BALLAST_BYTES = 256 * 1024;
const ballasts = new Map<string, string>();

/** This process's ballast file in the data dir's control folder, made once; removed when the process exits (and by
 *  `prune` when a SIGKILL left it). null when there is no room for it. */
function ballast(dir: string): string | null {
  const known = ballasts.get(dir);
  if (known) return known;
  // Named with this process's start time too: a later process with the same PID is not taken for it (registry.ts).
  const file = path.join(dir, "control", `${ownTag()}.ballast`);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, Buffer.alloc(BALLAST_BYTES), { mode: 0o600 });
  } catch {
    fs.rmSync(file, { force: true });
    return null;
  }
  if (!ballasts.size) process.once("exit", () => releaseBallasts());
  ballasts.set(dir, file);
  // Once per process and data dir, as it makes its own: the reserves of processes a SIGKILL ended go.
  removeStaleBallasts(dir);
  return file;
}

/** Removes the reserves (`<pid>.<start>.ballast`) of processes that no longer run; `prune` calls it too. */
export function removeStaleBallasts(dataDir: string): void {
  const dir = path.join(dataDir, "control");
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const b = /^(\d+)\.(\d+)\.ballast$/.exec(n);
    if (!b || tagAlive(b[1], b[2])) continue;
    // Housekeeping never stops a run: what cannot be removed stays for the next sweep.
    try {
      fs.rmSync(path.join(dir, n), { force: true });
    } catch {
      // not ours to remove
    }
  }
}

function releaseBallasts(): void {
  for (const f of ballasts.values()) fs.rmSync(f, { force: true });
  ballasts.clear();
}

export function openStoreFile(
  openDb: (file: string) => Db,
  file: string,
  opts: Omit<StoreOptions, "file" | "freeBytes" | "release"> & {
    runsTasks?: boolean;
    /** pi's agent dir: our records there and beside the store are made ours alone (0600 files, 0700 folders), also
     *  what an older version left open. */
    agentDir?: string;
  },
): Store {
  const dir = path.dirname(file);
  if (opts.agentDir) privateRecords(opts.agentDir, dir);
  let store: Store;
  try {
    fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
    const reserve = opts.runsTasks ? ballast(dir) : null;
    store = new Store(openDb(file), {
      ...opts,
      file,
      freeBytes: () => freeBytes(dir),
      release: reserve ? () => fs.rmSync(reserve, { force: true }) : undefined,
    });
  } catch (err) {
    throw storeError(err, file, () => freeBytes(dir));
  }
  // Marking the runs of owners that are gone as interrupted is a write: a database this user may only read is
  // still listed and shown (its writes fail later, each with its one line).
  try {
    store.recoverStale();
  } catch (err) {
    if (!(err instanceof StoreError)) throw err;
  }
  return store;
}
