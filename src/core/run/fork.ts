// Forked context (docs/composing.md): a child that starts from a copy of the parent pi session's conversation up to the
// delegating call, so it knows what the parent knows without a re-told prompt. We write the copy ourselves as
// the child's session file (pi then continues it, like a resume) instead of pi's `--fork`: that way our mirror
// entries are left out, the delegating call itself (and any call beside it, still without a result) is cut, and
// every pi version we run (0.73–1.x, all session format 3) does the same. Earlier delegations stay, calls and
// results, as the parent saw them: the copy must repeat the parent's conversation byte for byte to be a cache
// read (a provider's prefix cache ends at the first difference), and what earlier sub-agents found is context too.

import type { Host } from "../host.ts";
import type { Profile } from "../profiles/profile.ts";
import type { ForkEntry, ResolvedTask } from "./task-types.ts";
import type { ParentPrompt } from "./launch/parent-prompt.ts";

export type { ForkEntry };
import type { TaskContext } from "./task-context.ts";

/** A pi session entry (format 3): a tree by id/parentId; the conversation is the branch from root to leaf. */

/** Our mirror entries (pi/persist.ts): bookkeeping the model never saw. */
const OUR_ENTRY = "pi-subagents";

type Part = { type?: string; id?: string; name?: string };
type Msg = { role?: string; content?: unknown; toolCallId?: string; toolName?: string; stopReason?: string };

/**
 * The parent's branch, cleaned: our mirror entries dropped, tool calls that never got a result (the delegating
 * call, and calls made beside it) dropped, entries re-linked in order. Returns [] when there
 * is no conversation to fork.
 */
export function forkBranch(branch: ForkEntry[]): ForkEntry[] {
  const results = new Set<string>();
  for (const e of branch) {
    const m = e.message as Msg | undefined;
    if (e.type === "message" && m?.role === "toolResult" && m.toolCallId) results.add(m.toolCallId);
  }
  const kept: ForkEntry[] = [];
  for (const e of branch) {
    if (e.type === "custom" && e.customType === OUR_ENTRY) continue;
    if (e.type !== "message") {
      kept.push(e);
      continue;
    }
    const m = e.message as Msg;
    if (m?.role === "toolResult") {
      if (m.toolCallId && results.has(m.toolCallId)) kept.push(e);
      continue;
    }
    if (m?.role === "assistant" && Array.isArray(m.content)) {
      const parts = (m.content as Part[]).filter(
        (p) => p?.type !== "toolCall" || (p.id !== undefined && results.has(p.id)),
      );
      if (parts.length === m.content.length) {
        kept.push(e);
        continue;
      }
      if (!parts.some((p) => p?.type !== "thinking")) continue;
      // A turn that only asked for tools we removed ends there: it reads as a finished answer.
      const toolUse = parts.some((p) => p?.type === "toolCall");
      kept.push({ ...e, message: { ...m, content: parts, ...(toolUse ? {} : { stopReason: "stop" }) } });
      continue;
    }
    kept.push(e);
  }
  let parent: string | null = null;
  return kept.map((e) => {
    const linked = { ...e, parentId: parent };
    parent = e.id;
    return linked;
  });
}

/** The child's session file: a new header (its own id, its cwd) and the cleaned branch. */
export function forkFileText(
  entries: ForkEntry[],
  o: { sessionId: string; cwd: string; parentSession?: string; now: Date },
): string {
  const header = {
    type: "session",
    version: 3,
    id: o.sessionId,
    timestamp: o.now.toISOString(),
    cwd: o.cwd,
    ...(o.parentSession ? { parentSession: o.parentSession } : {}),
  };
  return `${[header, ...entries].map((e) => JSON.stringify(e)).join("\n")}\n`;
}

/** A pi session file's current branch (leaf = its last entry), for the CLI's `--fork FILE`. */
export function branchOfFile(text: string): ForkEntry[] {
  const byId = new Map<string, ForkEntry>();
  let leaf: ForkEntry | undefined;
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let e: ForkEntry;
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    if (!e || e.type === "session" || typeof e.id !== "string") continue;
    byId.set(e.id, e);
    leaf = e;
  }
  const out: ForkEntry[] = [];
  for (let e = leaf; e; e = e.parentId ? byId.get(e.parentId) : undefined) out.push(e);
  return out.reverse();
}

/**
 * What the parent pi sent with its delegating request, as its extension sees it at call time: its system prompt
 * and its active tools' definitions, in order. A forked child that sends the same (src/child-extension/fork-prompt.ts) repeats
 * the parent's whole request as a prefix — providers bill that as a cache read (tools → system → messages).
 */
export type { ParentPrompt };

/** Whether a forked task's child repeats its parent's request (a cache read): not a child in another folder (an
 *  isolated one works in its worktree; the prompt names the folder), nor one whose agent picks its own tools (the
 *  tool list would differ anyway), nor when the parent's prompt is not known. */
export function cacheTrueFork(o: {
  cwd: string;
  isolated: boolean;
  parent?: ParentPrompt;
  profile: Profile | undefined;
}): boolean {
  const p = o.profile;
  if (o.isolated || !o.parent?.systemPrompt || o.parent.cwd !== o.cwd) return false;
  return !(p?.tools || p?.noTools || p?.excludeTools?.length);
}

export const FORK_NEEDS_SESSION = 'context "fork" needs a parent pi session to copy';

/** Writes a forked task's session file before its first start (never over an existing one: a resume keeps its own). */
export function writeFork(
  host: Pick<Host, "stat" | "mkdirp" | "writeFile">,
  sessionFile: string,
  entries: ForkEntry[],
  cwd: string,
  parentSession?: string,
): void {
  if (host.stat(sessionFile)) return;
  host.mkdirp(sessionFile.slice(0, sessionFile.lastIndexOf("/")));
  host.writeFile(
    sessionFile,
    forkFileText(entries, { sessionId: globalThis.crypto.randomUUID(), cwd, parentSession, now: new Date() }),
    0o600,
  );
}

/**
 * The conversation each task starts from: the parent's cleaned branch for a task whose resolved context is "fork",
 * none for the others. Returns why not (naming the task) when one asks and there is no conversation to copy.
 */
export function forkEntries(
  tasks: readonly Pick<ResolvedTask, "name" | "context">[],
  branch: () => ForkEntry[] | undefined,
  noSession = FORK_NEEDS_SESSION,
): (ForkEntry[] | undefined)[] | string {
  let cleaned: ForkEntry[] | undefined;
  const forks: (ForkEntry[] | undefined)[] = [];
  for (const t of tasks) {
    if (t.context !== "fork") {
      forks.push(undefined);
      continue;
    }
    cleaned ??= forkBranch(branch() ?? []);
    if (!cleaned.length) return `task "${t.name}": ${noSession}`;
    forks.push(cleaned);
  }
  return forks;
}

/** Stage "fork" (after place, which decides the folder the copy names): the forked conversation becomes the child's session. */
export function forkTask(task: TaskContext): void {
  if (task.input.fork?.length && !task.resumeOf)
    writeFork(task.engine.host, task.sessionFile, task.input.fork, task.cwd, task.engine.call.parentSession);
}
