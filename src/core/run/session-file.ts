// Where a task is recorded: the session record its runs go in, and its child's own pi session file (pi's per-cwd
// folder convention under the agent dir).
import type { Host } from "../host.ts";
import { REDACTED } from "../sanitize.ts";
import type { NewSession } from "../store/store-types.ts";
import type { Engine } from "./engine.ts";
import { DEFAULT_AGENT, type ResolvedTask } from "./task-types.ts";

/** The session a task's runs are recorded in, when it has none yet (its call's parent pi session and schedule). */
export function sessionOf(
  engine: Pick<Engine, "call">,
  task: Pick<ResolvedTask, "sessionId" | "name" | "cwd">,
  agent: string,
  sessionFile?: string,
): NewSession {
  return {
    id: task.sessionId,
    name: task.name,
    agent,
    cwd: task.cwd,
    parentSession: engine.call.parentSession,
    schedule: engine.call.schedule,
    ...(sessionFile ? { sessionFile } : {}),
  };
}

/** This process as the owner of the runs it records: its PID, and that process's start time (a PID the kernel later
 *  gives to another process is not taken for it). */
export function runOwner(host: Pick<Host, "pid" | "startTimeOf">): { ownerPid: number; ownerStart: string | null } {
  return { ownerPid: host.pid, ownerStart: host.startTimeOf?.(host.pid) ?? null };
}

/** pi's own convention for per-cwd folders: `/a/b` → `--a-b--`. */
export function cwdSlug(cwd: string): string {
  return `--${cwd.replace(/^[/\\]+/, "").replace(/[/\\:]+/g, "-")}--`;
}

export function childSessionFile(agentDir: string, cwd: string, agent: string, id: string): string {
  const safeAgent = agent.replace(/[^A-Za-z0-9_.-]/g, "_") || DEFAULT_AGENT;
  return `${agentDir}/subagent-sessions/${cwdSlug(cwd)}/${safeAgent}_${id}.jsonl`;
}

/** The session id a child's session file is named for (childSessionFile), as a kept child finds it. */
export const sessionIdOfFile = (file: string): string =>
  (file.split("/").pop() ?? "")
    .replace(/\.jsonl$/, "")
    .split("_")
    .pop() ?? "";

/** The largest session file masked in place (a bigger one is left as pi wrote it, and said to be). */
const MAX_MASKED = 64 * 1024 * 1024;

/**
 * The child's own transcript (its pi session file) with the values of its `.worktreeinclude` secrets masked, as they
 * are everywhere else its run is shown: what a later resume, `pi --resume` or a backup reads holds none of them. The
 * file is rewritten in place without following a link the child may have put there (Host.within). False when it
 * could not be.
 */
export function maskTranscript(host: Pick<Host, "within">, sessionFile: string, secrets: readonly string[]): boolean {
  if (!secrets.length) return true;
  const folder = host.within(sessionFile.slice(0, sessionFile.lastIndexOf("/")));
  const info = folder.info(sessionFile);
  if (!info) return true;
  if (info.kind !== "file" || info.size > MAX_MASKED) return false;
  const text = folder.readText(sessionFile, MAX_MASKED);
  if (text === null) return false;
  // In a JSON line a value may stand escaped (quotes, backslashes, newlines): both forms go; longest first.
  const forms = [...new Set(secrets.flatMap((v) => [v, JSON.stringify(v).slice(1, -1)]))].sort(
    (a, b) => b.length - a.length,
  );
  let masked = text;
  for (const f of forms) masked = masked.split(f).join(REDACTED);
  return masked === text || folder.writeText(sessionFile, masked);
}
