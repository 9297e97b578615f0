// Keeps one WindowView per task, updated from engine events; what the live windows, plain lines and final
// report read from.
import type { RunState } from "../core/run-state.ts";
import { windowLines } from "../core/run-state.ts";
import type { TaskOutcome } from "../core/task.ts";
import type { WindowView } from "../ui/windows.ts";

export type TaskSlot = { view: WindowView; startedAt: number | null; state: RunState | null };

export function newSlot(name: string, sessionId: string, profile: string | undefined, timeoutSec: number): TaskSlot {
  return {
    view: { name, sessionId, profile, status: "queued", toolCount: 0, elapsedMs: 0, timeoutSec, cost: 0, lines: [] },
    startedAt: null,
    state: null,
  };
}

export function slotStarted(slot: TaskSlot, now: number): void {
  slot.startedAt = now;
  slot.view.status = "running";
}

export function slotEvent(slot: TaskSlot, state: RunState): void {
  slot.state = state;
  slot.view.toolCount = state.toolCount;
  slot.view.cost = state.usage.cost;
  if (state.model) slot.view.model = state.provider ? `${state.provider}/${state.model}` : state.model;
}

export function slotDone(slot: TaskSlot, outcome: TaskOutcome, now: number): void {
  const r = outcome.result;
  slot.view.status = r.status;
  slot.view.sessionId = outcome.sessionId;
  slot.view.error = r.error;
  slot.view.toolCount = r.toolCount;
  slot.view.cost = r.usage.cost;
  if (r.model) slot.view.model = r.model;
  slot.view.elapsedMs = slot.startedAt === null ? 0 : now - slot.startedAt;
  slot.startedAt = null;
  if (slot.state) slot.view.lines = windowLines(slot.state, 0);
  slot.state = null;
}

/** Refreshes the parts that change with time (elapsed, the streaming lines). */
export function refreshViews(slots: TaskSlot[], now: number, maxLines: number): WindowView[] {
  for (const s of slots) {
    if (s.startedAt !== null) s.view.elapsedMs = now - s.startedAt;
    if (s.state) s.view.lines = windowLines(s.state, maxLines);
  }
  return slots.map((s) => s.view);
}
