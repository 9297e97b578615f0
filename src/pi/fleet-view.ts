// /subagents in pi's terminal UI: a live list of running and recent sub-agent sessions — this pi's, other pi
// sessions', CLI runs' and background supervisors' alike (the owner registry and the store are shared) — and,
// for the picked one, its live window followed through its owner (the same `watch` stream `subagents attach`
// reads). Steering and stopping leave the view (pi's input and confirm dialogs) and come back to it.
import { sessionState, watch } from "../control/client.ts";
import { runningSessions } from "../control/running.ts";
import type { WatchMessage } from "../control/watch.ts";
import { fleetRows, isLive, renderFleet, titleLines, type FleetRow } from "../ui/fleet.ts";
import { endedViews, outcomeOf } from "../ui/recorded.ts";
import { clip, sanitizeLine } from "../ui/text-width.ts";
import { isFinished, renderWindow, type WindowView } from "../ui/windows.ts";
import { terminalRows } from "./render-budget.ts";
import { themeStyle, type ThemeLike } from "./render.ts";
import type { PiServices } from "./services.ts";

export type FleetAction = { kind: "steer" | "stop"; id: string; name: string; status: string };

type Tui = { requestRender(): void };

const REFRESH_MS = 1000;
/** Lines of a window's work shown while it runs; an ended one shows its output, up to this many lines in all. */
const WINDOW_LINES = 20;
const DETAIL_MAX = 40;
/** pi's lines under a custom view in place of its editor (measured in pi 1.6.0): the footer's two lines, plus the
 * status line and one spare. A taller view pushes its own top (the title, the picked row) off the screen. */
const FLEET_CHROME_ROWS = 4;
const fleetBudget = () => Math.max(6, terminalRows() - FLEET_CHROME_ROWS);

/** Keys as terminals send them (legacy and kitty forms); the view needs only a handful. */
function keyOf(data: string): "up" | "down" | "enter" | "back" | "s" | "x" | null {
  if (data === "\x1b[A" || data === "\x1bOA" || data === "k") return "up";
  if (data === "\x1b[B" || data === "\x1bOB" || data === "j") return "down";
  if (data === "\r" || data === "\n" || data === "\x1b[13u" || data === "\x1b[C" || data === "\x1bOC") return "enter";
  if (data === "\x1b" || data === "\x1b[27u" || data === "q" || data === "\x1b[D" || data === "\x1bOD") return "back";
  if (data === "s" || data === "x") return data;
  return null;
}

export class FleetView {
  private rows: FleetRow[] = [];
  private selected = 0;
  private detail: { id: string; view: WindowView | null; stream: { close(): void } | null; ended: boolean } | null =
    null;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly rt: PiServices,
    private readonly tui: Tui,
    private readonly theme: ThemeLike,
    private readonly done: (a: FleetAction | null) => void,
    open?: string,
    /** This pi session against its caps, shown under the list. */
    private readonly caps?: () => string,
  ) {
    this.refresh();
    if (open) {
      this.selected = Math.max(
        0,
        this.rows.findIndex((r) => r.id === open),
      );
      this.openDetail(open);
    }
    this.timer = setInterval(() => {
      this.refresh();
      this.tui.requestRender();
    }, REFRESH_MS);
  }

  private refresh(): void {
    const keep = this.rows[this.selected]?.id;
    this.rows = fleetRows(
      runningSessions(this.rt.store, this.rt.dataDir),
      this.rt.store.listSessions({ limit: 30 }),
      process.pid,
    );
    const at = keep ? this.rows.findIndex((r) => r.id === keep) : -1;
    this.selected = at >= 0 ? at : Math.min(this.selected, Math.max(0, this.rows.length - 1));
    // A window whose owner was still starting (no socket yet) is followed as soon as it can be.
    if (this.detail && !this.detail.stream && !this.detail.ended) this.follow(this.detail.id);
  }

  private openDetail(id: string): void {
    this.detail = { id, view: null, stream: null, ended: false };
    this.follow(id);
  }

  /** Follows a running session through its owner; an ended one shows its recorded end. */
  private follow(id: string): void {
    const d = this.detail;
    if (!d) return;
    const state = sessionState(this.rt, id);
    if (state.kind !== "active") return this.showEnd(id);
    if (!state.owner?.socket) return;
    const stream = watch(state.owner.socket, id, (m: WatchMessage) => {
      if (m.type === "view") d.view = m.view;
      else if (m.type === "queued") d.view = null;
      if (m.type !== "line") this.tui.requestRender();
    });
    d.stream = stream;
    void stream.done.then((r) => {
      if (this.detail !== d) return;
      d.stream = null;
      if (r.ended || sessionState(this.rt, id).kind !== "active") this.showEnd(id);
      this.tui.requestRender();
    });
  }

  private showEnd(id: string): void {
    if (!this.detail) return;
    const record = this.rt.store.getSession(id);
    this.detail.view = record ? endedViews([outcomeOf(id, record, false)])[0] : null;
    this.detail.ended = true;
  }

  private closeDetail(): void {
    this.detail?.stream?.close();
    this.detail = null;
  }

  handleInput(data: string): void {
    const key = keyOf(data);
    const row = this.detail ? this.rows.find((r) => r.id === this.detail!.id) : this.rows[this.selected];
    if (key === "back") {
      if (this.detail) this.closeDetail();
      else return this.done(null);
    } else if (key === "up" && !this.detail) this.selected = Math.max(0, this.selected - 1);
    else if (key === "down" && !this.detail) this.selected = Math.min(this.rows.length - 1, this.selected + 1);
    else if (key === "enter" && !this.detail && row) this.openDetail(row.id);
    else if ((key === "s" || key === "x") && row)
      return this.done({ kind: key === "s" ? "steer" : "stop", id: row.id, name: row.name, status: row.status });
    this.tui.requestRender();
  }

  render(width: number): string[] {
    const style = themeStyle(this.theme);
    if (!this.detail) {
      const caps = this.caps?.();
      const maxLines = fleetBudget() - (caps ? 1 : 0);
      const list = renderFleet(this.rows, this.selected, { width, style, now: Date.now(), maxLines });
      return caps ? [...list, clip(style.dim(caps), width)] : list;
    }
    const row = this.rows.find((r) => r.id === this.detail!.id);
    const v = this.detail.view;
    // Steer and stop only while it runs or waits: an ended session has nothing to take them.
    const live = !this.detail.ended && (v ? !isFinished(v.status) : isLive(row?.status));
    const name = `${style.bold("Sub-agents")} › ${style.bold(sanitizeLine(row?.name ?? this.detail.id))}`;
    const title = titleLines(name, live ? "s steer · x stop · Esc back" : "Esc back", width, style);
    if (!v) return [...title, style.dim(`  ${this.detail.ended ? "no record of this session" : "starting…"}`)];
    const body = renderWindow(v, { width, maxLines: WINDOW_LINES, expanded: isFinished(v.status), style });
    const room = Math.min(DETAIL_MAX, fleetBudget() - title.length);
    return [
      ...title,
      ...(body.length > room
        ? [...body.slice(0, Math.max(1, room - 1)), style.dim(`  … (subagents session ${v.sessionId} has it all)`)]
        : body),
    ];
  }

  invalidate(): void {}

  dispose(): void {
    clearInterval(this.timer);
    this.closeDetail();
  }
}
