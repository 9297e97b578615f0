// Hand-offs between the tasks of one call (docs/composing.md): `after: [names]` makes a task wait for those tasks, and
// `{{name}}` in its prompt becomes their output. The scheduler asks this queue which task may start next; a task
// whose dependency did not complete is skipped (it never starts a child). The graph is checked before anything
// starts, so a bad call is refused whole.
import { truncateHeadTail } from "../truncate.ts";
import type { RunResult } from "../types.ts";
import { PLACEHOLDER, type DagTask } from "../task-graph.ts";

/** Output handed to a dependent task, head and tail (the full text stays in the store). */
export const HANDOFF_BYTES = 32 * 1024;
const HANDOFF_LINES = 800;

/** What a finished task hands on: its structured result as JSON when it has one, else its output, bounded. */
export function handoffText(r: Pick<RunResult, "output"> & { structured?: unknown }, sessionId: string): string {
  if (r.structured !== undefined) return JSON.stringify(r.structured, null, 2);
  return truncateHeadTail(r.output, {
    maxBytes: HANDOFF_BYTES,
    maxLines: HANDOFF_LINES,
    hint: `full output: session ${sessionId}`,
  }).text;
}

export function fillPrompt(prompt: string, after: string[], texts: Map<string, string>): string {
  return prompt.replace(PLACEHOLDER, (whole, ref: string) =>
    after.includes(ref) && texts.has(ref) ? texts.get(ref)! : whole,
  );
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

  constructor(private readonly tasks: readonly DagTask[]) {
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
        return {
          index: i,
          skipBecause: `skipped: ${failed.map((d) => `"${this.tasks[d].name}"`).join(", ")} did not complete`,
        };
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
