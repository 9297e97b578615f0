// The shape of a call's hand-offs (docs/composing.md): which tasks wait for which (`after`) and where their outputs go
// (`{{name}}`). Checked when the call is read, before anything starts; the scheduler's queue is run/dag.ts.

export type DagTask = { name: string; prompt: string; after?: string[] };

/** `{{name}}` (spaces inside the braces allowed). Names not of this call are left alone: prompts may hold templates. */
export const PLACEHOLDER = /\{\{\s*([^{}]+?)\s*\}\}/g;

export function placeholders(prompt: string): string[] {
  return [...prompt.matchAll(PLACEHOLDER)].map((m) => m[1]);
}

/** Why this call's hand-offs cannot run, naming the tasks; null when they can (or there are none). */
export function dagProblem(tasks: DagTask[]): string | null {
  const index = new Map<string, number>();
  for (const [i, t] of tasks.entries()) {
    if (index.has(t.name)) {
      // Names only matter once a task refers to them: plain fan-outs may keep repeated names.
      if (tasks.some((x) => x.after?.length))
        return `two tasks are named "${t.name}" (tasks[${index.get(t.name)}] and tasks[${i}]): names must be unique when tasks use "after"`;
    }
    if (!index.has(t.name)) index.set(t.name, i);
  }
  for (const [i, t] of tasks.entries()) {
    for (const dep of t.after ?? []) {
      if (dep === t.name) return `tasks[${i}] ("${t.name}") lists itself in "after"`;
      if (!index.has(dep))
        return `tasks[${i}] ("${t.name}").after names "${dep}", which is not a task of this call (tasks: ${[...index.keys()].join(", ")})`;
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
