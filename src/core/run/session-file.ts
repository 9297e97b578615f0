// Where a task is recorded: the session record its runs go in, and its child's own pi session file (pi's per-cwd
// folder convention under the agent dir).
import type { Host } from "../host.ts";
import type { NewSession } from "../store/store-types.ts";
import type { Engine } from "./engine.ts";
import type { TaskInput } from "./task-types.ts";

/** The session a task's runs are recorded in, when it has none yet (its call's parent pi session and schedule). */
export function sessionOf(
  engine: Pick<Engine, "call">,
  task: Pick<TaskInput, "sessionId" | "name" | "cwd">,
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
  const safeAgent = agent.replace(/[^A-Za-z0-9_.-]/g, "_") || "default";
  return `${agentDir}/subagent-sessions/${cwdSlug(cwd)}/${safeAgent}_${id}.jsonl`;
}
