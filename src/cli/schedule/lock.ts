// One run of a schedule at a time: a lock file naming the run's pid and its process start time, made with O_EXCL.
// A lock whose process is gone (or whose pid now belongs to another process) is stale and taken over, so a run
// killed with the machine does not stop the schedule for good.
import * as fs from "node:fs";
import { procStartTime, recordAlive } from "../../host/process-identity.ts";

export type LockHolder = { pid: number; startTime: string | null; startedAt: number };

function readHolder(file: string): LockHolder | null {
  try {
    const v = JSON.parse(fs.readFileSync(file, "utf8")) as LockHolder;
    return typeof v.pid === "number" ? v : null;
  } catch {
    return null;
  }
}

/** Takes the lock for this process: a release function, or who holds it. */
export function takeLock(file: string): { release: () => void } | { heldBy: LockHolder } {
  const me: LockHolder = { pid: process.pid, startTime: procStartTime(process.pid), startedAt: Date.now() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(me), { flag: "wx", mode: 0o600 });
      return {
        release: () => {
          // Only our own lock: a stale-lock takeover by another run must not be undone by us.
          if (readHolder(file)?.pid === me.pid) fs.rmSync(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as { code?: string }).code !== "EEXIST") throw err;
    }
    const holder = readHolder(file);
    if (holder && recordAlive(holder)) return { heldBy: holder };
    // Stale (its run is gone) or unreadable (a run died while writing it): taken over.
    fs.rmSync(file, { force: true });
  }
  const holder = readHolder(file);
  return { heldBy: holder ?? { pid: 0, startTime: null, startedAt: 0 } };
}
