// Live window state for one batch of tasks (a tool call or a CLI delegate), and a bounded snapshot of it:
// the pi tool's `details` is stored in the parent session on every call, so it carries only visible lines.
import { windowLines, type RunState } from "../core/run/process/run-state.ts";
import type { CallEvent } from "../core/call/runner.ts";
import type { Engine } from "../core/run/engine.ts";
import type { ResolvedTask, TaskOutcome } from "../core/run/task-types.ts";
import { truncateHeadTail } from "../core/truncate.ts";
import { budgetLabel } from "../core/budget.ts";
import type { Usage } from "../core/types.ts";
import { isFinished, type WindowedDetails, type WindowStatus, type WindowView } from "./windows.ts";

/** Lines kept per window in details: enough for the expanded view without growing with the transcript. */
export const DETAIL_LINES = 60;
/** Output kept per window in details (head and tail): what the expanded pi view shows of each task's result. */
const OUTPUT_LINES = 40;
const OUTPUT_BYTES = 4096;

/** A window's turns and tokens from a child's usage (prompt tokens count the cached ones too). */
function usageParts(u: Usage): Pick<WindowView, "turns" | "tokens"> {
  return { turns: u.turns, tokens: { in: u.input + u.cacheRead + u.cacheWrite, out: u.output } };
}

/** A cancelled task is not a failure of the task: it has a status of its own on screen. */
export function windowStatus(o: TaskOutcome): WindowStatus {
  if (o.result.status === "completed") return "completed";
  if (o.result.errorCode === "SKIPPED") return "skipped";
  return o.result.errorCode === "SUBAGENT_CANCELLED" ? "cancelled" : "error";
}

export class CallWindows {
  readonly views: WindowView[];
  private readonly states: (RunState | null)[];
  private readonly started: (number | null)[];
  /** By task: the warnings known as it started (a plain run printed them then: summary.ts endLines). Kept here, not
   *  in the views, which pi stores with every tool update. */
  readonly startWarnings: readonly string[][];
  /** Which pi the children run, for the expanded view (the engine's piDescribe). */
  pi?: string;

  constructor(
    tasks: { name: string; sessionId: string; profile?: string; timeoutSec: number; after?: string[] }[],
    private readonly maxLines: number,
  ) {
    this.views = tasks.map((t) => ({
      name: t.name,
      sessionId: t.sessionId,
      profile: t.profile,
      status: "queued",
      toolCount: 0,
      elapsedMs: 0,
      timeoutSec: t.timeoutSec,
      cost: 0,
      lines: [],
      ...(t.after?.length ? { after: t.after } : {}),
    }));
    this.states = tasks.map(() => null);
    this.started = tasks.map(() => null);
    this.startWarnings = tasks.map(() => []);
  }

  start(i: number, now: number): void {
    this.views[i].status = "running";
    this.started[i] = now;
  }

  /** Agent-file warnings of a task, known once it starts (the call runner's taskWarnings event). */
  warn(i: number, warnings: string[]): void {
    if (!warnings.length) return;
    this.views[i].warnings = [...warnings];
    this.startWarnings[i].splice(0, Infinity, ...warnings);
  }

  event(i: number, state: RunState): void {
    this.states[i] = state;
    const v = this.views[i];
    v.toolCount = state.toolCount;
    v.cost = state.usage.cost;
    Object.assign(v, usageParts(state.usage));
    if (state.todos) v.todos = { ...state.todos };
    if (state.model) v.model = state.provider ? `${state.provider}/${state.model}` : state.model;
    if (state.budget) v.budget = budgetLabel(state.budget, state.usage);
  }

  end(i: number, o: TaskOutcome, now: number): void {
    const v = this.views[i];
    const r = o.result;
    v.status = windowStatus(o);
    v.sessionId = o.sessionId;
    v.output = r.output
      ? truncateHeadTail(r.output, { maxBytes: OUTPUT_BYTES, maxLines: OUTPUT_LINES }).text
      : undefined;
    v.error = r.error;
    v.toolCount = r.toolCount;
    v.cost = r.usage.cost;
    Object.assign(v, usageParts(r.usage));
    if (r.model) v.model = r.model;
    if (r.warnings?.length) v.warnings = [...r.warnings];
    if (r.gate) v.gate = { ...r.gate };
    if (r.structured !== undefined) v.structured = r.structured;
    const started = this.started[i];
    v.elapsedMs = started === null ? 0 : now - started;
    this.started[i] = null;
    const s = this.states[i];
    if (s) v.lines = windowLines(s, DETAIL_LINES);
    this.states[i] = null;
  }

  /** What the call runner reports (core/call/runner.ts), drawn in: whether a window changed in a way worth drawing
   *  again (a start, an event, an end; warnings show with the next of those, and other events change no window). */
  apply(e: CallEvent, now: number): boolean {
    if (e.type === "taskStart") this.start(e.index, now);
    else if (e.type === "taskWarnings") this.warn(e.index, e.warnings);
    else if (e.type === "taskProgress") this.event(e.index, e.state);
    else if (e.type === "taskEnd") this.end(e.index, e.outcome, now);
    else return false;
    return e.type !== "taskWarnings";
  }

  snapshot(now: number, lineCount = DETAIL_LINES): WindowedDetails {
    const windows = this.views.map((v, i) => {
      const s = this.states[i];
      const started = this.started[i];
      const wait = s?.holdUntil ? Math.ceil((s.holdUntil - now) / 1000) : 0;
      return {
        ...v,
        // Running with nothing heard from its child yet: its process is still starting.
        ...(v.status === "running" && !s ? { starting: true } : {}),
        elapsedMs: started === null ? v.elapsedMs : now - started,
        lines: s ? windowLines(s, lineCount) : v.lines.slice(-lineCount),
        ...(wait > 0 ? { rateWaitSec: wait } : {}),
      };
    });
    const done = windows.every((w) => isFinished(w.status));
    return {
      windows,
      maxLinesPerWindow: this.maxLines,
      status: done ? "done" : "running",
      sessionIds: windows.map((w) => w.sessionId),
      ...(this.pi ? { pi: this.pi } : {}),
    };
  }
}

/** The windows of a call's tasks as the call module prepared them (core/call/): one place says what a window starts
 *  with. `from`: the settings they are shown by (and which pi runs the children, when known): a call's engine, or
 *  the CLI's context. */
export function callWindows(
  from: { settings: Pick<Engine["settings"], "maxLinesPerWindow">; piDescribe?: string },
  inputs: readonly ResolvedTask[],
  maxLines = from.settings.maxLinesPerWindow,
): CallWindows {
  const windows = new CallWindows(
    inputs.map((t) => ({
      name: t.name,
      sessionId: t.sessionId,
      profile: t.agent,
      timeoutSec: t.timeoutSec,
      after: t.after,
    })),
    maxLines,
  );
  windows.pi = from.piDescribe;
  return windows;
}
