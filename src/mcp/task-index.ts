// Which sessions an MCP task is, kept beside the store (`<data dir>/mcp-tasks/<task id>.json`, owner-only), so a task
// is found again by a server other than the one that started it: a client that restarted its server (a reconnect
// over stdio is a new process) still reads the task's state and result from the records. Written before the task's
// handle is returned (the extension wants a task to exist once its id is known), removed when its time to live ends.
import type { Host } from "../core/host.ts";

export type TaskKind = "delegate" | "subagent";
export type IndexedTask = { kind: TaskKind; sessions: string[]; createdAt: number; ttlMs: number };

/** A task id is a session id: 16 hex digits (a name of no other shape is never read as a path). */
const TASK_ID = /^[0-9a-f]{16}$/;

export class TaskIndex {
  private readonly dir: string;

  constructor(
    private readonly host: Pick<Host, "writeFile" | "rename" | "readText" | "remove" | "mkdirp" | "listDir">,
    dataDir: string,
  ) {
    this.dir = `${dataDir.replace(/\/+$/, "")}/mcp-tasks`;
  }

  private file(taskId: string): string | null {
    return TASK_ID.test(taskId) ? `${this.dir}/${taskId}.json` : null;
  }

  /** Records a task; throws when it cannot (the task is then not started as one). */
  write(taskId: string, task: IndexedTask): void {
    const file = this.file(taskId);
    if (!file) throw new Error(`not a task id: ${taskId}`);
    this.host.mkdirp(this.dir);
    const tmp = `${file}.${process.pid}.tmp`;
    this.host.writeFile(tmp, JSON.stringify(task), 0o600);
    if (!this.host.rename(tmp, file)) throw new Error(`cannot record the task in ${this.dir}`);
  }

  read(taskId: string): IndexedTask | null {
    const file = this.file(taskId);
    const text = file ? this.host.readText(file) : null;
    if (!text) return null;
    try {
      const t = JSON.parse(text) as IndexedTask;
      const ok =
        (t.kind === "delegate" || t.kind === "subagent") &&
        Array.isArray(t.sessions) &&
        t.sessions.every((s) => typeof s === "string" && TASK_ID.test(s)) &&
        typeof t.createdAt === "number" &&
        typeof t.ttlMs === "number";
      return ok ? t : null;
    } catch {
      return null;
    }
  }

  remove(taskId: string): void {
    const file = this.file(taskId);
    if (file) this.host.remove(file);
  }

  /** Removes the records of tasks whose time to live has ended, and records that cannot be read. */
  sweep(now: number): void {
    let names: string[];
    try {
      names = this.host.listDir(this.dir).map((e) => e.name);
    } catch {
      return;
    }
    for (const name of names) {
      // A write under way in another server is its own (a `.tmp` a killed one left is a few bytes).
      if (!name.endsWith(".json")) continue;
      const t = this.read(name.slice(0, -".json".length));
      if (!t || t.createdAt + t.ttlMs < now) this.host.remove(`${this.dir}/${name}`);
    }
  }
}
