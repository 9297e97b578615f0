// File, process-table and signal helpers shared by the Bun and Node hosts (node:fs works in both runtimes).
import * as fs from "node:fs";
import * as os from "node:os";
import type { ChildProcess, Db, DirEntry, Host, SpawnSpec } from "../core/host.ts";
import { maskHomeDir } from "../core/sanitize.ts";
import { descendantsOf } from "./proc-tree.ts";
import { markedProcesses } from "./proc-marks.ts";
import { startNetProxy } from "./net-proxy.ts";
import { processRuns, signalPid } from "./process-identity.ts";
import { makePrivate } from "./private-files.ts";

let tempDir: string | null = null;

/**
 * This process's folder for temp files: a random name made by mkdtemp, mode 0700, so another local user can
 * neither create it first nor read what is in it. Made on first use and removed when the process exits.
 */
function privateTempDir(): string {
  if (tempDir && fs.existsSync(tempDir)) return tempDir;
  const dir = fs.mkdtempSync(`${os.tmpdir()}/subagents-`);
  fs.chmodSync(dir, 0o700);
  if (tempDir === null) {
    process.once("exit", () => {
      if (tempDir) fs.rmSync(tempDir, { recursive: true, force: true });
    });
  }
  tempDir = dir;
  return dir;
}

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
    privateTempDir,
    homedir: () => os.homedir(),
    cwd: () => process.cwd(),
    descendants: descendantsOf,
    marked: markedProcesses,
    signal: signalPid,
    isAlive: processRuns,
  };
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
