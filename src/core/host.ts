// The only door from the engine to the runtime. `src/host/bun.ts` (and later a Node host) implement it;
// tests inject their own. Keeping this narrow is what lets `core/` run unchanged under Bun and Node.

export type SpawnSpec = {
  /** argv[0] is the executable (absolute path or a name on PATH). Never run through a shell. */
  cmd: string[];
  cwd: string;
  env: Record<string, string>;
  /** Written to the child's stdin, which is then closed (unless keepStdin). null: stdin is /dev/null. */
  stdin: string | null;
  /** Keep stdin open after writing `stdin`: the caller writes more with ChildProcess.writeStdin (a pooled pi in
   *  RPC mode, run/process/pool.ts). */
  keepStdin?: boolean;
  /** Open fd 3 as a pipe from the child to us (the compact transport). */
  fd3: boolean;
  /** Open fd 4 as a pipe from us to the child (control lines such as a steer; see src/control/). */
  control?: boolean;
  /** Open fd 5 as a pipe from us to the child, write this into it and close it: data that must not be a file on disk
   *  (a sandboxed child's auth.json, which bubblewrap reads from it: core/run/runners/sandbox.ts). */
  fd5?: string;
  /** A session and process group of its own (a task hook: run/task-hooks.ts). The Bun host always does this. */
  ownGroup?: boolean;
};

export type ExitInfo = { code: number | null; signal: string | null };

export interface ChildProcess {
  readonly pid: number;
  readonly stdout: AsyncIterable<Uint8Array>;
  readonly stderr: AsyncIterable<Uint8Array>;
  /** Present when spawned with fd3: true. Must always be drained or the child blocks. */
  readonly fd3: AsyncIterable<Uint8Array> | null;
  /** Resolves once the process has really exited. */
  readonly exited: Promise<ExitInfo>;
  /** Present when spawned with control: true. Writes one line to the child's fd 4; false once it is closed. */
  readonly sendControl?: (line: string) => boolean;
  /** Present when spawned with keepStdin: writes to the child's stdin; false once it is closed. */
  readonly writeStdin?: (text: string) => boolean;
  /** A task's lease on a kept child (core/run/process/pool.ts): which of that process's tasks this is (1: it started for it). */
  readonly task?: number;
  /** A lease: the mark its task's processes carry (core/run/process/marks.ts), and those found still running when
   *  its task settled (already ended, before the process took another task); absent when nobody looked (pi refused
   *  the task: the process ends, and its own end looks under its mark). */
  readonly mark?: string;
  readonly leftovers?: MarkedProcess[];
  kill(signal: "SIGTERM" | "SIGKILL"): void;
}

/** A process carrying a run's mark in its environment (core/run/process/marks.ts). `busy`: on a CPU or in an
 *  uninterruptible wait when looked at (state R or D) — for instance between `setsid`'s exec and the command's. */
export type MarkedProcess = { pid: number; mark: string; command: string; busy?: boolean };

/** The host side of a sandboxed child's network: an HTTP proxy on a Unix socket (src/host/net-proxy.ts). */
export type NetProxySpec = { socketPath: string; allow: (host: string, port: number) => boolean };
export type NetProxy = {
  socketPath: string;
  /** Refused destinations ("host:port") and how often each was asked for. */
  refused(): Map<string, number>;
  /** Stops listening, drops every open connection and removes the socket. Never throws. */
  close(): Promise<void>;
};

/** A symlink's entry says where it leads (isFile/isDirectory) and that it is one. */
export type DirEntry = { name: string; isFile: boolean; isDirectory: boolean; isSymlink?: boolean };

/** What is at a path, as the path itself is (a symlink is a link, never what it points at). */
export type NodeInfo = {
  kind: "file" | "dir" | "link" | "other";
  /** Owned by this process's user. */
  ours: boolean;
  size: number;
  links: number;
  mtimeMs: number;
};

/**
 * File work in a folder someone else can write (a sandboxed child's task folder): every path is absolute and below
 * the folder it was made for, walked from it one folder at a time without following a link; a step that is a link,
 * not a folder, or not this user's refuses the whole operation. Files are read or rewritten only when they are plain
 * files of this user with one link. Never throws: a refusal is null, [] or false.
 */
export interface FolderFs {
  info(path: string): NodeInfo | null;
  readText(path: string, limit?: number): string | null;
  /** Rewrites an existing plain file of ours. */
  writeText(path: string, text: string): boolean;
  /** The entries as they are (`isSymlink` set, `isFile`/`isDirectory` false for a link). */
  list(path: string): DirEntry[];
  /** Removes a file or a link (never what it points at), or a folder with everything in it (nothing followed). */
  remove(path: string): boolean;
  /** Renames within one folder; false when `to` exists or either name is refused. */
  rename(from: string, to: string): boolean;
}

/** Minimal synchronous SQLite surface shared by bun:sqlite and node:sqlite. */
export interface Db {
  exec(sql: string): void;
  run(sql: string, params?: unknown[]): { changes: number };
  get<T>(sql: string, params?: unknown[]): T | undefined;
  all<T>(sql: string, params?: unknown[]): T[];
  close(): void;
}

export interface Host {
  readonly kind: "bun" | "node";
  spawn(spec: SpawnSpec): ChildProcess;
  /** Pids of all live descendants of pid (children, grandchildren, …), deepest last. */
  descendants(pid: number): number[];
  /** Send a signal to a pid, ignoring "no such process". */
  signal(pid: number, signal: "SIGTERM" | "SIGKILL"): void;
  isAlive(pid: number): boolean;
  /** The kernel's start time of a PID (/proc/<pid>/stat field 22), or null where the system does not tell: with the
   *  PID it names one process, where a PID alone may since name another. */
  startTimeOf?(pid: number): string | null;
  /** Why `path` cannot be a task's working folder (missing, not a folder, not readable), or null. */
  folderProblem?(path: string): string | null;
  /** Every live process of ours (but this one) carrying a run's mark — `run`'s or one under it, when given; absent or
   *  empty where that cannot be read. */
  marked?(run?: string): MarkedProcess[];
  /** Starts a proxy for one sandboxed child's network; absent where that cannot be done. */
  netProxy?(spec: NetProxySpec): Promise<NetProxy>;

  readText(path: string): string | null;
  readBytes(path: string, limit: number): Uint8Array | null;
  stat(path: string): { size: number; isFile: boolean; isDirectory: boolean; mtimeMs: number } | null;
  listDir(path: string): DirEntry[];
  writeFile(path: string, data: string, mode?: number): void;
  remove(path: string): void;
  /** Renames a file or folder; false when it cannot (never throws). */
  rename(from: string, to: string): boolean;
  /** Makes folders (each new one owner-only: everything core makes is ours). */
  mkdirp(path: string): void;
  /** Makes one folder, owner-only; false when the name exists already (a lock: only one maker wins). */
  createDir(path: string): boolean;
  /** Owner-only (0600, folders and executables 0700) when it is ours and not a symlink; never throws. */
  makePrivate(path: string): void;
  realpath(path: string): string | null;
  /** What a symlink holds, as written; null when it is not one. */
  readLink(path: string): string | null;
  /** The no-follow file work of a folder tree someone else can write (`root`: the owner's own real path). */
  within(root: string): FolderFs;
  /** A private folder (0700, random name) for this process's temp files; removed when the process exits. */
  privateTempDir(): string;

  openDb(path: string): Db;

  env: Record<string, string | undefined>;
  homedir(): string;
  cwd(): string;
  pid: number;
  /** How to start a JS file with the runtime that is running us (for children). */
  execPath: string;
  now(): number;
}

/** Timers are injected too so the scheduler and runner can be tested with a fake clock. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The longest delay one runtime timer takes (2^31 − 1 ms, about 24.8 days): a longer one would fire at once, with
 *  a TimeoutOverflowWarning, so a `--timeout 3000000` would both warn and stop nothing when due. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer for any delay: past MAX_TIMER_MS it waits in steps. The handle is what clearLongTimeout takes. */
export function longTimeout(fn: () => void, ms: number): { timer?: ReturnType<typeof setTimeout> } {
  const handle: { timer?: ReturnType<typeof setTimeout> } = {};
  const arm = (left: number) => {
    handle.timer = setTimeout(left > MAX_TIMER_MS ? () => arm(left - MAX_TIMER_MS) : fn, Math.min(left, MAX_TIMER_MS));
  };
  arm(Math.max(0, ms));
  return handle;
}

export const clearLongTimeout = (h: unknown) => clearTimeout((h as { timer?: ReturnType<typeof setTimeout> })?.timer);

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: longTimeout,
  clearTimeout: clearLongTimeout,
};
