// /subagents — with pi's terminal UI: the live fleet view (fleet-view.ts): pick a session to see its window,
// steer it or stop it. Without one (older UIs, RPC clients): the same through select/input/confirm dialogs.
// Without any UI: recent sessions as text. Also `/subagents show ID` and `/subagents kill ID | kill all` (stops
// sub-agents of this pi session; a single call's children share one abort).
import { printable } from "../core/sanitize.ts";
import { cancelSession, steerSession } from "../control/actions.ts";
import { sessionState } from "../control/client.ts";
import { cancelledBy } from "../core/run/process/abort-reason.ts";
import { runningSessions } from "../control/running.ts";
import { formatSessionTranscript, sessionNotFound } from "../core/store/transcript.ts";
import { fleetRows, isLive, renderFleet } from "../ui/fleet.ts";
import { sessionRow } from "../ui/format.ts";
import { plainStyle } from "../ui/windows.ts";
import type { ActiveRuns } from "./active-runs.ts";
import { FleetView, stopWhat, type FleetAction } from "./fleet-view.ts";
import type { ThemeLike } from "./render.ts";
import type { PiServices } from "./services.ts";

type Notify = (m: string, t?: "info" | "warning" | "error") => void;
type Ui = {
  notify: Notify;
  select?(title: string, options: string[]): Promise<string | undefined>;
  input?(title: string, placeholder?: string): Promise<string | undefined>;
  confirm?(title: string, message: string): Promise<boolean>;
  custom?<T>(
    factory: (tui: { requestRender(): void }, theme: ThemeLike, keybindings: unknown, done: (r: T) => void) => unknown,
  ): Promise<T>;
};
type CommandContext = {
  ui: Ui;
  hasUI?: boolean;
  mode?: string;
  cwd?: string;
  sessionManager?: { getSessionId?(): string };
};
/** This pi session's use against its caps (session-guard.ts capsLine). */
export type CapsLine = (ctx: CommandContext) => string;

const DESCRIPTION =
  "Sub-agents: live fleet view (pick one to watch, steer or stop); /subagents [show ID | kill ID | kill all]";

export function subagentsCommand(services: () => Promise<PiServices>, active: ActiveRuns, capsLine?: CapsLine) {
  return {
    description: DESCRIPTION,
    handler: async (args: string, ctx: CommandContext) => {
      const rt = await services();
      const [verb, id] = (args ?? "").trim().split(/\s+/);
      // Names, transcripts and errors children wrote: nothing of them acts on pi's view.
      const notify: Notify = (text, type) => ctx.ui.notify(printable(text), type);
      if (verb === "kill") return kill(active, id, notify);
      if (verb === "show") return show(rt, id, notify);
      const caps = () => capsLine?.(ctx) ?? "";
      if (ctx.hasUI && (ctx.mode === undefined || ctx.mode === "tui") && typeof ctx.ui.custom === "function")
        return fleet(rt, ctx.ui, caps);
      if (ctx.hasUI && ctx.ui.select) return fleetByDialogs(rt, ctx.ui, caps);
      const rows = rt.store.listSessions({ limit: 20 });
      const now = Date.now();
      const text = rows.length ? rows.map((r) => sessionRow(r, now)).join("\n") : "No sub-agent sessions yet.";
      notify(caps() ? `${caps()}\n${text}` : text, "info");
    },
  };
}

/** The live view until Esc. A steer's text and a stop's confirmation are asked inside the view itself: the keys
 *  typed right after `s` or `x` stay in it (through a dialog opened after it closed, the first of them would land in
 *  pi's editor, and Enter would send them to the parent's model). */
async function fleet(rt: PiServices, ui: Ui, caps: () => string): Promise<void> {
  let answered = false;
  const result = await ui.custom!<FleetAction | null>((tui, theme, _keys, done) => {
    const view: FleetView = new FleetView(
      rt,
      tui,
      theme,
      (a) => {
        answered = true;
        view.dispose(); // also when a pi does not dispose custom components itself
        done(a);
      },
      caps,
      (a, text) => perform(rt, ui, a, text),
    );
    return view;
  });
  // A UI that cannot show custom components (an RPC client) answers at once without us: use dialogs.
  if (!answered && result === undefined) return fleetByDialogs(rt, ui, caps);
}

/** A steer (with its text) or a stop, already asked for and confirmed; what became of it is a notification. */
function perform(rt: PiServices, ui: Ui, a: FleetAction, text?: string): void {
  const status = () => rt.store.getSession(a.id)?.status ?? "finished";
  if (a.kind === "steer") {
    if (!text?.trim()) return;
    // Delivery waits for the child's next turn boundary: the UI does not wait with it.
    void steerSession(sessionState(rt, a.id), a.id, text, status).then((r) =>
      ui.notify(
        r.ok
          ? r.answered
            ? `Answered the question ${a.name} (${a.id}) was waiting on.`
            : `Steer delivered to ${a.name} (${a.id}).`
          : `Steer not delivered to ${a.name}: ${r.reason}.`,
        r.ok ? "info" : "warning",
      ),
    );
    return;
  }
  void cancelSession(sessionState(rt, a.id), a.id, status, "/subagents").then((r) =>
    ui.notify(
      r.ok ? `Stopping ${a.name} (${a.id}).` : `Cannot stop ${a.name}: ${r.reason}.`,
      r.ok ? "info" : "warning",
    ),
  );
}

/** A steer or stop picked through dialogs (a UI without custom components): asked for with pi's dialogs. */
async function act(rt: PiServices, ui: Ui, a: FleetAction): Promise<void> {
  if (!isLive(a.status)) {
    ui.notify(`${a.name} (${a.id}) is not running (${a.status}).`, "warning");
    return;
  }
  if (a.kind === "steer") {
    const text = await ui.input?.(`Steer ${a.name}`, "a message for the sub-agent, delivered at its next turn");
    return perform(rt, ui, a, text);
  }
  if (ui.confirm && !(await ui.confirm(`Stop ${a.name}?`, stopWhat(a.id)))) return;
  perform(rt, ui, a);
}

/** The fleet through plain dialogs: pick a session, then what to do with it. */
async function fleetByDialogs(rt: PiServices, ui: Ui, caps: () => string = () => ""): Promise<void> {
  const rows = fleetRows(runningSessions(rt.store, rt.dataDir), rt.store.listSessions({ limit: 30 }), process.pid);
  if (!rows.length) return ui.notify("No sub-agent sessions yet.", "info");
  const lines = renderFleet(rows, -1, { width: 200, style: plainStyle, now: Date.now() }).slice(1);
  const picked = await ui.select!(caps() ? `Sub-agents · ${caps()}` : "Sub-agents", lines);
  const row = rows[lines.indexOf(picked ?? "")];
  if (!row) return;
  const running = isLive(row.status);
  const choice = await ui.select!(
    `${row.name} (${row.id})`,
    running ? ["Show transcript", "Steer", "Stop"] : ["Show transcript"],
  );
  if (choice === "Show transcript") return show(rt, row.id, ui.notify);
  if (choice === "Steer" || choice === "Stop")
    await act(rt, ui, { kind: choice === "Steer" ? "steer" : "stop", id: row.id, name: row.name, status: row.status });
}

function show(rt: PiServices, id: string | undefined, notify: Notify): void {
  const record = id ? rt.store.getSession(id) : null;
  if (!record || record.runs.length === 0) return notify(sessionNotFound(id ?? ""), "error");
  const messages = new Map(record.runs.map((r) => [r.id, rt.store.getMessages(r.id)]));
  notify(formatSessionTranscript(record, messages).slice(0, 20_000), "info");
}

/** How a run stopped by `/subagents kill` is recorded (the model reads it in the call's result). */
const KILLED = cancelledBy("Stopped from /subagents kill");

function kill(active: ActiveRuns, id: string | undefined, notify: Notify): void {
  if (id === "all" || (!id && active.running().length <= 1)) {
    const n = active.abortAll(KILLED);
    notify(n ? `Stopping ${n} running sub-agent${n === 1 ? "" : "s"}.` : "No sub-agents are running.", "info");
    return;
  }
  if (!id)
    return notify(
      `Several sub-agents are running: /subagents kill ID (one of ${active.running().join(", ")}) or /subagents kill all.`,
      "warning",
    );
  const killed = active.kill(id, KILLED);
  notify(killed ? `Stopping sub-agent ${id}.` : `Sub-agent ${id} is not running here.`, killed ? "info" : "warning");
}
