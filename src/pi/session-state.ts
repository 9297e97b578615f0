// What belongs to one pi session of this extension (pi can replace its session in one process: /new, /resume,
// /fork): the project files the user allowed in it, the background results the model is waiting for right now,
// and the spend of background children still to be handed to pi's totals. One object per pi session, kept by
// the extension (ToolEnv.sessions) instead of module-level maps shared by every session of the process.
import { addUsage, emptyUsage, type Usage } from "../core/types.ts";

export class PiSession {
  /** Project-local agents allowed in this session, by file (asked once per file and session). */
  readonly allowedProfiles = new Set<string>();
  /** Project workflows allowed in this session, by file. */
  readonly allowedWorkflows = new Set<string>();
  /** A project's hooks allowed in this session (the hooks as a whole: a changed list is asked again). */
  readonly allowedHooks = new Set<string>();
  /** Sessions a get_subagent_output call is waiting for right now (a count per id): their end needs no notice. */
  private readonly awaited = new Map<string, number>();
  /** Background tasks of this session whose end has not been announced yet. */
  private readonly pendingEnds = new Set<string>();
  /** Of those, the ones whose end a wait already returned: the wait sees the record's end, which comes before the
   *  call's taskEnd event, so the wait may be over by the time the end would be announced. */
  private readonly endReturned = new Set<string>();
  /** Background children's spend, until the first get_subagent_output that returns their result takes it. */
  private readonly backgroundSpend = new Map<string, Usage>();

  /** Marks `id` as waited for; the returned function ends this wait, saying whether it saw the session end. */
  awaiting(id: string): (ended: boolean) => void {
    this.awaited.set(id, (this.awaited.get(id) ?? 0) + 1);
    return (ended) => {
      const n = (this.awaited.get(id) ?? 1) - 1;
      if (n > 0) this.awaited.set(id, n);
      else this.awaited.delete(id);
      if (ended && this.pendingEnds.has(id)) this.endReturned.add(id);
    };
  }

  /** A background task of this session started: its end is announced unless a wait returns it first. */
  backgroundStarted(id: string): void {
    this.pendingEnds.add(id);
  }

  /** Called once, at a background task's end: whether the model still needs to be told of it. */
  announceEnd(id: string): boolean {
    this.pendingEnds.delete(id);
    const returned = this.endReturned.delete(id);
    return !returned && !this.awaited.has(id);
  }

  noteBackgroundSpend(sessionId: string, usage: Usage | undefined): void {
    if (!usage) return;
    this.backgroundSpend.set(sessionId, addUsage(this.backgroundSpend.get(sessionId) ?? emptyUsage(), usage));
  }

  /** Taken once: a later call returning the same output does not count it again. */
  takeBackgroundSpend(sessionId: string): Usage | undefined {
    const u = this.backgroundSpend.get(sessionId);
    this.backgroundSpend.delete(sessionId);
    return u;
  }
}

/** The extension's pi sessions by id ("" for an old pi that gives none: the process is then the session). */
export class PiSessions {
  private readonly byId = new Map<string, PiSession>();

  for(sessionId: string | undefined): PiSession {
    const key = sessionId ?? "";
    let s = this.byId.get(key);
    if (!s) this.byId.set(key, (s = new PiSession()));
    return s;
  }
}
