// Errors the CLI turns into exit codes: usage and configuration problems exit 2 with one clear line, and so does
// a session database that cannot be used (a StoreError, core/store/store-error.ts), whenever it is met.
import type { TaskOutcome } from "../core/run/task-types.ts";

export class UsageError extends Error {}
export class ConfigError extends Error {}

export const EXIT = {
  ok: 0,
  taskFailed: 1,
  usage: 2,
  sighup: 129,
  sigint: 130,
  closedPipe: 141,
  sigterm: 143,
} as const;

const STORE_CODES = new Set(["STORE_FAILED", "DISK_FULL"]);

/** A call's exit code: 2 when the session database failed for a task (it could not be recorded, or its end could
 *  not), else 1 when a task did not complete, else 0. */
export function exitForOutcomes(outcomes: TaskOutcome[]): number {
  if (outcomes.some((o) => o.result.recordError || STORE_CODES.has(o.result.errorCode ?? ""))) return EXIT.usage;
  return outcomes.some((o) => o.result.status !== "completed") ? EXIT.taskFailed : EXIT.ok;
}

/** What a person must be told on screen about runs whose end is not in the store. */
export function unrecordedLines(outcomes: TaskOutcome[]): string[] {
  return outcomes
    .filter((o) => o.result.recordError)
    .map(
      (o) =>
        `subagents: ${o.name} (${o.sessionId}): its result could not be recorded: ${o.result.recordError!.message}`,
    );
}

const FS_TROUBLE: Record<string, string> = {
  ENOSPC: "disk full",
  EDQUOT: "disk quota exceeded",
  EROFS: "read-only file system",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
};

/** One line for a file system failure that reached the top (a full disk, a folder this user may not write), or null
 *  for anything else: the person gets what failed and where, not a stack trace. */
export function fileSystemLine(err: unknown): string | null {
  const e = err as { code?: string; path?: string; syscall?: string };
  const what = e?.code ? FS_TROUBLE[e.code] : undefined;
  if (!what) return null;
  return `${what}: cannot ${e.syscall ?? "use"} ${e.path ?? "a file it needs"}`;
}
