// Our temporary folders: each process that runs children has one (`<tmp>/subagents-<pid>.<start>-XXXXXX`, mode
// 0700: another local user can neither make it first nor read it) holding the children's prompt files, proxy
// sockets and each run's own TMPDIR. It goes when its process exits; one whose process was killed (SIGKILL, a power
// cut) is found by the owner in its name — its PID and that process's start time, so a reused PID does not keep
// it — and removed by the next process that makes its own, and by `subagents prune` (in both places they are made).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ownTag, tagAlive } from "./process-identity.ts";
import { within } from "./no-follow.ts";
import { lstat, PRIVATE_DIR } from "./private-files.ts";

const OURS = /^subagents-(?:(\d+)\.(\d+)-)?[A-Za-z0-9]{6}$/;
/** A folder of an older build names no owner: it is taken for abandoned once nothing in it changed for this long. */
const UNNAMED_AFTER_MS = 24 * 3_600_000;

let tempDir: string | null = null;
let shortDir: string | null = null;

/** A new folder of this process under `base`, named for it (`subagents-<pid>.<start>-XXXXXX`) and owner-only. */
function ownedTempDir(base: string): string {
  const dir = fs.mkdtempSync(path.join(base, `subagents-${ownTag()}-`));
  fs.chmodSync(dir, PRIVATE_DIR);
  return dir;
}

/** This process's folder for temp files, made on first use and removed when the process exits. */
export function privateTempDir(): string {
  if (tempDir && fs.existsSync(tempDir)) return tempDir;
  const first = tempDir === null;
  const dir = ownedTempDir(os.tmpdir());
  if (first) {
    process.once("exit", () => {
      if (tempDir) removeOwn(tempDir);
    });
    // Those of processes that are gone (a killed owner could not remove its own): after this turn of the event loop,
    // while the child this folder is for starts, not before it (a /tmp of thousands of entries takes milliseconds).
    setTimeout(() => removeStaleTempDirs(), 0).unref?.();
  }
  tempDir = dir;
  return dir;
}

/**
 * This process's folder for a Unix socket whose path must stay short (sun_path: ~104 bytes): like privateTempDir's,
 * under /tmp when the system temp folder's own path is long. Made on first use, removed when the process exits.
 */
export function shortTempDir(): string {
  if (shortDir) return shortDir;
  const dir = ownedTempDir(tempBases().at(-1) as string);
  shortDir = dir;
  process.once("exit", () => removeOwn(dir));
  return dir;
}

/** Our own folder, at exit: what cannot be removed stays for the next sweep (an exception here would be the last
 *  thing the user sees). */
function removeOwn(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    // left for the next process's sweep
  }
}

/** The folders ours are made in: the system temp folder, and /tmp where shortTempDir falls back to it. */
const tempBases = (): string[] => {
  const tmp = os.tmpdir();
  return Buffer.byteLength(tmp) < 40 || path.resolve(tmp) === "/tmp" ? [tmp] : [tmp, "/tmp"];
};

/** Our temporary folders whose process is gone (this user's only). Never throws. */
export function staleTempDirs(): string[] {
  return tempBases().flatMap(staleIn);
}

/** Another user can put anything under our names in a shared temp folder (a symlink into a folder we may not even
 *  look into, a file, a folder of theirs): only a real folder of this user is taken, looked at without following. */
function staleIn(tmp: string): string[] {
  const now = Date.now();
  let names: string[];
  try {
    names = fs.readdirSync(tmp);
  } catch {
    return [];
  }
  const uid = process.getuid?.();
  const out: string[] = [];
  for (const name of names) {
    const m = OURS.exec(name);
    if (!m) continue;
    const dir = path.join(tmp, name);
    if (dir === tempDir || dir === shortDir) continue;
    const st = lstat(dir);
    if (!st?.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
    if (m[1]) {
      if (!tagAlive(m[1], m[2])) out.push(dir);
    } else if (now - st.mtimeMs > UNNAMED_AFTER_MS && now - newestChange(dir, st.mtimeMs) > UNNAMED_AFTER_MS)
      out.push(dir);
  }
  return out;
}

/** Removes them (nothing in them followed; what cannot go stays, said by its absence from the list); returns what
 *  went (or would go, with `dryRun`). Never throws: a sweep is housekeeping, never a reason for a run to fail. */
export function removeStaleTempDirs(dryRun = false): string[] {
  const out: string[] = [];
  for (const d of staleTempDirs()) {
    if (dryRun || within(path.dirname(d)).remove(d)) out.push(d);
  }
  return out;
}

function newestChange(dir: string, own: number): number {
  let newest = own;
  try {
    for (const e of fs.readdirSync(dir)) newest = Math.max(newest, lstat(path.join(dir, e))?.mtimeMs ?? 0);
  } catch {
    // gone meanwhile
  }
  return newest;
}
