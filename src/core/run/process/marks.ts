// Every process a child's work starts carries its run's mark in the environment (SUBAGENTS_MARK): bash passes its
// environment on to everything it starts, also to what double-forks or calls setsid and is re-parented to init,
// where walking down the process tree no longer finds it. At the end of the run the owner finds the processes
// carrying the mark (/proc/<pid>/environ, readable for our own uid) and ends them (leftovers.ts).
//
// A mark is a path of segments, one per level of delegation: a child started from inside another child's bash
// gets its parent's mark plus a segment of its own, so ending a run also ends what its own sub-agents left.
// A segment is `<owner pid>.<session id>.<random>[.keep]`: the session id lets `subagents cancel ID` find a finished run's kept
// processes, `.keep` says the run keeps its processes on purpose (keepProcesses). A kept child (pool.ts) gives
// each task's session a segment of its own under the process's mark (`s<hash of the session file>`), set by the
// child extension when that session starts.

export const MARK_ENV = "SUBAGENTS_MARK";

export type { MarkedProcess } from "../../host.ts";

const random = () => Math.floor(Math.random() * 0x1000000000).toString(36);

/** The mark of a new child: under its parent's mark (the owner runs inside another child), if any. */
export function newMark(parent: string | undefined, owner: number, sessionId: string, keep = false): string {
  const id = sessionId.replace(/[^\w-]/g, "") || "x";
  const segment = `${owner}.${id}.${random()}${keep ? ".keep" : ""}`;
  return parent ? `${parent}/${segment}` : segment;
}

/** FNV-1a, 32 bits: a short stable name for a session file (no crypto module: the child extension shares this). */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36);
}

/** The mark of one task's session on a kept child: what that task's bash commands carry. */
export const sessionMark = (processMark: string, sessionFile: string) => `${processMark}/s${hash(sessionFile)}`;

/** Whether a process's mark is this run's (or one of its sub-agents'). */
export const within = (mark: string, run: string) => mark === run || mark.startsWith(`${run}/`);

const segments = (mark: string) => mark.split("/").filter((s) => /^\d+\./.test(s));

/** A mark that says its run keeps its processes on purpose. */
export const keeps = (mark: string) => segments(mark).some((s) => s.endsWith(".keep"));

/** The marks of this process's runs under way: a forced stop (a second Ctrl-C) ends what carries them at once. */
export const liveMarks = new Set<string>();

/** Whether the mark is a run of this session started by this owner process. */
export const ofOwnerSession = (mark: string, owner: number, sessionId: string) =>
  segments(mark).some((s) => s.startsWith(`${owner}.${sessionId}.`));

/** Whether the mark is a run of this session (any owner). */
export const ofSession = (mark: string, sessionId: string) => segments(mark).some((s) => s.split(".")[1] === sessionId);
