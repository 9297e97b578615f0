// The todo segment of a window's header: `[completed/total]` of the todo list a child keeps through a
// todo tool (an extension's `todo`, `todo_write`, `TodoWrite`, …). Read from the call's arguments, which carry
// the whole list in the usual shape `{todos: [{content, status}]}`.

export type TodoProgress = { completed: number; total: number };

const DONE = new Set(["completed", "complete", "done"]);

/** Progress of a todo tool call, or null when the call is not one or its list cannot be read. */
export function todoProgress(toolName: string, args: string): TodoProgress | null {
  if (!/todo/i.test(toolName)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return null; // arguments cut at the event cap: keep the last known progress
  }
  const list = (parsed as { todos?: unknown; items?: unknown })?.todos ?? (parsed as { items?: unknown })?.items;
  if (!Array.isArray(list) || list.length === 0) return null;
  let completed = 0;
  for (const t of list) {
    const item = t as { status?: unknown; done?: unknown; completed?: unknown };
    if (
      (typeof item?.status === "string" && DONE.has(item.status.toLowerCase())) ||
      item?.done === true ||
      item?.completed === true
    )
      completed++;
  }
  return { completed, total: list.length };
}
