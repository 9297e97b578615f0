// Hand-offs between the tasks of one call (DESIGN §9): `after: [names]` makes a task wait for those tasks, and
// `{{name}}` in its prompt becomes their output. The scheduler asks this queue which task may start next; a task
// whose dependency did not complete is skipped (it never starts a child). The graph is checked before anything
// starts, so a bad call is refused whole.
import { truncateHeadTail } from "../truncate.ts";
import type { RunResult } from "../types.ts";

export type DagTask = { name: string; prompt: string; after?: string[] };

/** Output handed to a dependent task, head and tail (the full text stays in the store). */
export const HANDOFF_BYTES = 32 * 1024;
const HANDOFF_LINES = 800;

export const SKIPPED_CODE = "SKIPPED";

/** `{{name}}` (spaces inside the braces allowed). Names not of this call are left alone: prompts may hold templates. */
const PLACEHOLDER = /\{\{\s*([^{}]+?)\s*\}\}/g;

export function placeholders(prompt: string): string[] {
  return [...prompt.matchAll(PLACEHOLDER)].map((m) => m[1]);
}

/** Why this call's hand-offs cannot run, naming the tasks; null when they can (or there are none). */
export function dagProblem(tasks: DagTask[]): string | null {
  const index = new Map<string, number>();
  for (const [i, t] of tasks.entries()) {
    if (index.has(t.name)) {
      // Names only matter once a task refers to them: plain fan-outs may keep repeated names.
      if (tasks.some((x) => x.after?.length)) return `two tasks are named "${t.name}" (tasks[${index.get(t.name)}] and tasks[${i}]): names must be unique when tasks use "after"`;
    }
    if (!index.has(t.name)) index.set(t.name, i);
  }
  for (const [i, t] of tasks.entries()) {
    for (const dep of t.after ?? []) {
      if (dep === t.name) return `tasks[${i}] ("${t.name}") lists itself in "after"`;
      if (!index.has(dep)) return `tasks[${i}] ("${t.name}").after names "${dep}", which is not a task of this call (tasks: ${[...index.keys()].join(", ")})`;
    }
    for (const ref of placeholders(t.prompt)) {
      if (!index.has(ref) || t.after?.includes(ref)) continue;
      return `tasks[${i}] ("${t.name}").prompt uses {{${ref}}} but "${ref}" is not in its "after"`;
    }
  }
  const cycle = findCycle(tasks, index);
  return cycle ? `tasks wait for each other in a cycle: ${cycle.join(" → ")}` : null;
}

function findCycle(tasks: DagTask[], index: Map<string, number>): string[] | null {
  const state = tasks.map(() => 0); // 0 new, 1 on the path, 2 done
  const path: number[] = [];
  const visit = (i: number): string[] | null => {
    if (state[i] === 2) return null;
    if (state[i] === 1) return [...path.slice(path.indexOf(i)), i].map((j) => tasks[j].name);
    state[i] = 1;
    path.push(i);
    for (const dep of tasks[i].after ?? []) {
      const found = visit(index.get(dep)!);
      if (found) return found;
    }
    path.pop();
    state[i] = 2;
    return null;
  };
  for (let i = 0; i < tasks.length; i++) {
    const found = visit(i);
    if (found) return found;
  }
  return null;
}

/** What a finished task hands on: its structured result as JSON when it has one, else its output, bounded. */
export function handoffText(r: Pick<RunResult, "output"> & { structured?: unknown }, sessionId: string): string {
  if (r.structured !== undefined) return JSON.stringify(r.structured, null, 2);
  return truncateHeadTail(r.output, { maxBytes: HANDOFF_BYTES, maxLines: HANDOFF_LINES, hint: `full output: session ${sessionId}` }).text;
}

export function fillPrompt(prompt: string, after: string[], texts: Map<string, string>): string {
  return prompt.replace(PLACEHOLDER, (whole, ref: string) => (after.includes(ref) && texts.has(ref) ? texts.get(ref)! : whole));
}

export type Pick_ = { index: number; skipBecause?: string } | "wait" | "done";

/**
 * Which task may start next. Tasks start in input order among those whose dependencies are done; `wait()`
 * resolves when a running task ends (something may have become ready).
 */
export class DagQueue {
  private readonly byName = new Map<string, number>();
  private readonly taken: boolean[];
  private readonly ended: (boolean | null)[]; // null: not ended; true: completed
  private readonly texts = new Map<string, string>();
  private wake: (() => void)[] = [];

  constructor(private readonly tasks: DagTask[]) {
    for (const [i, t] of tasks.entries()) if (!this.byName.has(t.name)) this.byName.set(t.name, i);
    this.taken = tasks.map(() => false);
    this.ended = tasks.map(() => null);
  }

  take(): Pick_ {
    let pending = false;
    for (let i = 0; i < this.tasks.length; i++) {
      if (this.taken[i]) continue;
      pending = true;
      const deps = (this.tasks[i].after ?? []).map((n) => this.byName.get(n)!);
      const failed = deps.filter((d) => this.ended[d] === false);
      if (failed.length) {
        this.taken[i] = true;
        return { index: i, skipBecause: `skipped: ${failed.map((d) => `"${this.tasks[d].name}"`).join(", ")} did not complete` };
      }
      if (deps.every((d) => this.ended[d] === true)) {
        this.taken[i] = true;
        return { index: i };
      }
    }
    return pending ? "wait" : "done";
  }

  /** The prompt task i starts with: its `{{name}}` hand-offs filled in. */
  prompt(i: number): string {
    const t = this.tasks[i];
    return t.after?.length ? fillPrompt(t.prompt, t.after, this.texts) : t.prompt;
  }

  finish(i: number, r: Pick<RunResult, "status" | "output"> & { structured?: unknown }, sessionId: string): void {
    this.ended[i] = r.status === "completed";
    if (this.ended[i]) this.texts.set(this.tasks[i].name, handoffText(r, sessionId));
    const woken = this.wake;
    this.wake = [];
    for (const w of woken) w();
  }

  wait(): Promise<void> {
    return new Promise((resolve) => this.wake.push(resolve));
  }
}
