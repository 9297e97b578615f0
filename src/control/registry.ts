// Who owns which runs (docs/cli.md "Background runs"): one small JSON record per owner process next to the session database,
// `<data dir>/control/<pid>.json`, holding its PID, the kernel's start time of that PID (so a recycled PID is
// not taken for the owner), its control socket and the sessions it has not finished yet. A record, not a table:
// liveness is proven by the process and its socket, which no stored row can prove, and the schema stays put.
import * as fs from "node:fs";
import * as path from "node:path";
import { writeFileAtomic } from "../host/atomic-write.ts";
import { pidAlive, recordAlive } from "../host/process-identity.ts";
import { shortTempDir } from "../host/temp-dirs.ts";
import type { RunOwner } from "../core/store/store-types.ts";

export type OwnerRole = "cli" | "supervisor" | "pi" | "mcp";

export type OwnerRecord = {
  pid: number;
  /** /proc/<pid>/stat start time (clock ticks since boot); null where the system does not tell. */
  startTime: string | null;
  role: OwnerRole;
  /** Unix socket serving control requests; empty until the owner listens (a supervisor just spawned). */
  socket: string;
  /** Sessions the owner still has to finish (queued or running). */
  sessions: string[];
  /** Log file of a detached supervisor. */
  log?: string;
  /** The owner's queued tasks by session id: their names, and the tasks of their call they wait for (`after`,
   *  empty when none), so lists show queued tasks by name and what they wait for. */
  waiting?: Record<string, { name: string; after: string[] }>;
  startedAt: number;
};

export const controlDir = (dataDir: string) => path.join(dataDir, "control");
/** An owner's record file. */
export const ownerFile = (dataDir: string, pid: number) => path.join(controlDir(dataDir), `${pid}.json`);

/**
 * A socket path short enough for sun_path (~104 bytes): under the data dir when it fits, else in a private folder
 * of this process under the temp dir (a random name, 0700, named for this process so what a killed one left is
 * removed, and removed when the process exits: host/temp-dirs.ts) — never a name another user could guess and
 * take first. The record names it, so clients find it either way.
 */
export function socketPath(dataDir: string, pid: number): string {
  const near = path.join(controlDir(dataDir), `${pid}.sock`);
  if (Buffer.byteLength(near) < 100) return near;
  return path.join(shortTempDir(), `${pid}.sock`);
}

export function writeOwner(dataDir: string, r: OwnerRecord): void {
  writeFileAtomic(ownerFile(dataDir, r.pid), JSON.stringify(r), { mode: 0o600, dirMode: 0o700 });
}

export function removeOwner(dataDir: string, pid: number): void {
  fs.rmSync(ownerFile(dataDir, pid), { force: true });
}

export function readOwner(dataDir: string, pid: number): OwnerRecord | null {
  try {
    return JSON.parse(fs.readFileSync(ownerFile(dataDir, pid), "utf8")) as OwnerRecord;
  } catch {
    return null;
  }
}

/** Live owners; records of dead ones (and their sockets) are removed on the way. */
export function liveOwners(dataDir: string): OwnerRecord[] {
  let all: string[];
  try {
    all = fs.readdirSync(controlDir(dataDir));
  } catch {
    return [];
  }
  const names = all.filter((n) => /^\d+\.json$/.test(n));
  const out: OwnerRecord[] = [];
  for (const n of names) {
    const r = readOwner(dataDir, Number(n.slice(0, -5)));
    if (!r) continue;
    if (recordAlive(r)) out.push(r);
    else {
      removeOwner(dataDir, r.pid);
      if (r.socket) fs.rmSync(r.socket, { force: true });
    }
  }
  return out;
}

/**
 * Whether the process recorded as a run's owner is still that owner, never judged by a bare PID: the start time
 * the run recorded beside it, else (runs recorded before it was kept) the one in the owner's control record. A
 * run of an older subagents with neither falls back to the PID alone.
 */
export function ownerAlive(dataDir: string, owner: RunOwner): boolean {
  if (owner.start !== null) return recordAlive({ pid: owner.pid, startTime: owner.start });
  const r = readOwner(dataDir, owner.pid);
  return r ? recordAlive(r) : pidAlive(owner.pid);
}
