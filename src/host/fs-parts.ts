// File, process-table and signal helpers shared by the Bun and Node hosts (node:fs works in both runtimes).
import * as fs from "node:fs";
import * as os from "node:os";
import type { ChildProcess, Db, DirEntry, Host, SpawnSpec } from "../core/host.ts";
import { maskHomeDir } from "../core/sanitize.ts";
import { descendantsOf } from "./proc-tree.ts";
import { markedUnder } from "./proc-marks.ts";
import { startNetProxy } from "./net-proxy.ts";
import { processRuns, procStartTime, signalPid } from "./process-identity.ts";
import { makePrivate } from "./private-files.ts";
import { privateTempDir } from "./temp-dirs.ts";
import { within } from "./no-follow.ts";

export function fsParts() {
  return {
    readText(path: string): string | null {
      try {
        return fs.readFileSync(path, "utf8");
      } catch {
        return null;
      }
    },
    readBytes(path: string, limit: number): Uint8Array | null {
      let fd: number | null = null;
      try {
        fd = fs.openSync(path, "r");
        const buf = Buffer.alloc(limit);
        const n = fs.readSync(fd, buf, 0, limit, 0);
        return buf.subarray(0, n);
      } catch {
        return null;
      } finally {
        if (fd !== null) fs.closeSync(fd);
      }
    },
    stat(path: string) {
      try {
        const s = fs.statSync(path);
        return { size: s.size, isFile: s.isFile(), isDirectory: s.isDirectory(), mtimeMs: s.mtimeMs };
      } catch {
        return null;
      }
    },
    listDir(path: string): DirEntry[] {
      try {
        return fs.readdirSync(path, { withFileTypes: true }).map((d) => {
          let isFile = d.isFile();
          let isDirectory = d.isDirectory();
          if (d.isSymbolicLink()) {
            const s = this.stat(`${path}/${d.name}`);
            isFile = !!s?.isFile;
            isDirectory = !!s?.isDirectory;
          }
          return { name: d.name, isFile, isDirectory, isSymlink: d.isSymbolicLink() };
        });
      } catch {
        return [];
      }
    },
    writeFile(path: string, data: string, mode?: number): void {
      fs.writeFileSync(path, data, mode === undefined ? undefined : { mode });
      if (mode !== undefined) fs.chmodSync(path, mode);
    },
    remove(path: string): void {
      fs.rmSync(path, { force: true, recursive: true });
    },
    rename(from: string, to: string): boolean {
      try {
        fs.renameSync(from, to);
        return true;
      } catch {
        return false;
      }
    },
    mkdirp(path: string): void {
      // Every folder core makes is ours (session folders, the store's): owner-only (src/host/private-files.ts).
      fs.mkdirSync(path, { recursive: true, mode: 0o700 });
    },
    createDir(path: string): boolean {
      try {
        fs.mkdirSync(path, { mode: 0o700 });
        return true;
      } catch {
        return false;
      }
    },
    makePrivate(path: string): void {
      makePrivate(path);
    },
    readLink(path: string): string | null {
      try {
        return fs.readlinkSync(path);
      } catch {
        return null;
      }
    },
    realpath(path: string): string | null {
      try {
        return fs.realpathSync(path);
      } catch {
        return null;
      }
    },
    within,
    privateTempDir,
    homedir: () => os.homedir(),
    cwd: () => process.cwd(),
    descendants: descendantsOf,
    marked: markedUnder,
    signal: signalPid,
    isAlive: processRuns,
    startTimeOf: procStartTime,
    folderProblem,
  };
}

export function freeBytes(path: string): number | null {
  try {
    const s = fs.statfsSync(path);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return null;
  }
}

/** Why a task could not work in `path`: it must be a folder this user may list and enter. */
export function folderProblem(path: string): string | null {
  try {
    if (!fs.statSync(path).isDirectory()) return `${path} is not a folder`;
    fs.accessSync(path, fs.constants.R_OK | fs.constants.X_OK);
    return null;
  } catch (err) {
    const code = (err as { code?: string }).code;
    // The runtime reads arguments and the shell's folder as UTF-8: a name in another encoding (Latin-1 `café`) comes
    // through with U+FFFD in place of its bytes, so it cannot be reached — said as such, not as "does not exist".
    if (code === "ENOENT" && path.includes("\uFFFD"))
      return `${path} has a name that is not UTF-8 (shown with � for the bytes that are not), which subagents cannot reach byte for byte (its runtime reads names as UTF-8): rename the folder`;
    if (code === "ENOENT" || code === "ENOTDIR") return `${path} does not exist`;
    if (code === "EACCES" || code === "EPERM") return `${path} cannot be read by this user (permission denied)`;
    return `${path} cannot be used (${(err as Error).message})`;
  }
}

/** A Host for this process: the runtime-specific parts are spawn and the database. */
export function makeHost(
  kind: Host["kind"],
  spawn: (spec: SpawnSpec) => ChildProcess,
  openDb: (path: string) => Db,
): Host {
  // Whatever this user's home is, it never reaches output, the store or the parent session unmasked.
  maskHomeDir(os.homedir());
  return {
    kind,
    spawn,
    ...fsParts(),
    openDb,
    netProxy: startNetProxy,
    env: process.env,
    pid: process.pid,
    execPath: process.execPath,
    now: () => Date.now(),
  };
}
