// /subagents in pi's terminal UI: a live list of running and recent sub-agent sessions — this pi's, other pi
// sessions', CLI runs' and background supervisors' alike (the owner registry and the store are shared) — and,
// for the picked one, its live window followed through its owner (the same `watch` stream `subagents attach`
// reads). A steer's text and a stop's confirmation are asked on the view's last lines, so every key typed after
// `s` or `x` reaches them (a dialog opened after the view closed would let the first keys fall into pi's editor).
import { sessionState, watch } from "../control/client.ts";
import { runningSessions } from "../control/running.ts";
import type { WatchMessage } from "../control/watch.ts";
import { fleetRows, isLive, renderFleet, titleLines, type FleetRow } from "../ui/fleet.ts";
import { endedViews, outcomeOf } from "../ui/recorded.ts";
import { clip, sanitizeLine, visibleWidth } from "../ui/text-width.ts";
import { isFinished, renderWindow, type WindowView } from "../ui/windows.ts";
import { terminalRows } from "./render-budget.ts";
import { themeStyle, type ThemeLike } from "./render.ts";
import type { PiServices } from "./services.ts";

export type FleetAction = { kind: "steer" | "stop"; id: string; name: string; status: string };

type Tui = { requestRender(): void };

/** What a stop does, as its confirmation says it. */
export const stopWhat = (id: string) => `Session ${id} is stopped (kill protocol) and recorded as cancelled.`;

/** A steer being typed, or a stop waiting for its yes. */
type Prompt = { action: FleetAction; text: string };

const BRACKETED_PASTE = /\x1b\[20[01]~/g;
/** A printable key in the kitty keyboard protocol's form (CSI code u, no modifier but shift). */
const KITTY_PRINTABLE = /^\x1b\[(\d+)(?:;[12])?u$/;

/** The text a key or a paste adds to a line being typed: printable characters only (a newline is a space). */
function typed(data: string): string {
  const kitty = KITTY_PRINTABLE.exec(data);
  if (kitty) {
    const code = Number(kitty[1]);
    return code >= 32 && code !== 127 ? String.fromCodePoint(code) : "";
  }
  if (data.startsWith("\x1b") && !data.startsWith("\x1b[200~")) return "";
  return data
    .replace(BRACKETED_PASTE, "")
    .replace(/[\r\n\t]+/g, " ")
    .replace(/[\x00-\x1f\x7f]/g, "");
}

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

/**
 * A followed window in `room` lines. While it runs, its newest lines are what matters: the window is asked for as
 * many of its latest lines as fit beside its header, warnings and notes (older ones are counted, not shown). An
 * ended one shows its output from the start, cut with where the rest is.
 */
export function fittedWindow(
  v: WindowView,
  room: number,
  width: number,
  style: ReturnType<typeof themeStyle>,
): string[] {
  const expanded = isFinished(v.status);
  let body = renderWindow(v, { width, maxLines: WINDOW_LINES, expanded, style });
  if (body.length <= room) return body;
  if (!expanded) {
    body = renderWindow(v, { width, maxLines: Math.max(1, WINDOW_LINES - (body.length - room)), expanded, style });
    // Still too tall (many warnings): the header, then the newest lines.
    return body.length <= room ? body : [body[0], ...body.slice(-Math.max(1, room - 1))];
  }
  return [...body.slice(0, Math.max(1, room - 1)), style.dim(`  … (subagents session ${v.sessionId} has it all)`)];
}

export class FleetView {
  private rows: FleetRow[] = [];
  private selected = 0;
  private detail: { id: string; view: WindowView | null; stream: { close(): void } | null; ended: boolean } | null =
    null;
  private readonly timer: ReturnType<typeof setInterval>;
  /** A steer or stop being asked for on the view's last lines. */
  private prompt: Prompt | null = null;
  /** One line about the last key's effect (a session that is not running any more). */
  private note = "";

  constructor(
    private readonly rt: PiServices,
    private readonly tui: Tui,
    private readonly theme: ThemeLike,
    private readonly done: (a: FleetAction | null) => void,
    /** This pi session against its caps, shown under the list. */
    private readonly caps?: () => string,
    /** Carries out a steer (with its text) or a stop the person confirmed here; unset: the view hands `s` and `x`
     *  back through `done` (a front that asks with its own dialogs). */
    private readonly act?: (a: FleetAction, text?: string) => void,
  ) {
    this.refresh();
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
    if (this.prompt) {
      this.promptInput(data);
      return this.tui.requestRender();
    }
    const key = keyOf(data);
    const row = this.detail ? this.rows.find((r) => r.id === this.detail!.id) : this.rows[this.selected];
    this.note = "";
    if (key === "back") {
      if (this.detail) this.closeDetail();
      else return this.done(null);
    } else if (key === "up" && !this.detail) this.selected = Math.max(0, this.selected - 1);
    else if (key === "down" && !this.detail) this.selected = Math.min(this.rows.length - 1, this.selected + 1);
    else if (key === "enter" && !this.detail && row) this.openDetail(row.id);
    else if ((key === "s" || key === "x") && row) {
      const action: FleetAction = {
        kind: key === "s" ? "steer" : "stop",
        id: row.id,
        name: row.name,
        status: row.status,
      };
      if (!this.act) return this.done(action);
      if (isLive(row.status)) this.prompt = { action, text: "" };
      else this.note = `${sanitizeLine(row.name)} (${row.id}) is not running (${row.status}).`;
    }
    this.tui.requestRender();
  }

  /** A key while a steer is typed or a stop awaits its yes: Enter sends (or stops), Esc lets it be. */
  private promptInput(data: string): void {
    const p = this.prompt!;
    const key = keyOf(data);
    const cancel = data === "\x1b" || data === "\x1b[27u" || (p.action.kind === "stop" && /^[nN]$/.test(data));
    const submit = key === "enter" && data !== "\x1b[C" && data !== "\x1bOC";
    if (cancel) this.prompt = null;
    else if (p.action.kind === "stop") {
      if (submit || /^[yY]$/.test(data)) {
        this.prompt = null;
        this.act!(p.action);
      }
    } else if (submit) {
      this.prompt = null;
      if (p.text.trim()) this.act!(p.action, p.text);
    } else if (data === "\x7f" || data === "\b" || data === "\x1b[127u") p.text = [...p.text].slice(0, -1).join("");
    else if (data === "\x15") p.text = "";
    else p.text += typed(data);
  }

  /** The prompt's lines under the view: what is asked, and the keys that answer. */
  private promptLines(width: number, style: ReturnType<typeof themeStyle>): string[] {
    const p = this.prompt;
    if (!p) return this.note ? [clip(style.yellow(`  ${this.note}`), width)] : [];
    const name = sanitizeLine(p.action.name);
    if (p.action.kind === "stop")
      return [
        clip(style.bold(`  Stop ${name}? `) + style.dim(stopWhat(p.action.id)), width),
        clip(style.dim("  y or Enter stop · n or Esc keep it running"), width),
      ];
    // The end of what was typed stays in sight, and a cursor after it.
    const head = `  Steer ${name} › `;
    const room = Math.max(1, width - visibleWidth(head) - 1);
    const shown = [...p.text].slice(-room).join("");
    return [
      clip(`${style.bold(head)}${shown}▏`, width),
      clip(style.dim("  Enter sends it (delivered at its next turn) · Esc cancels"), width),
    ];
  }

  render(width: number): string[] {
    const style = themeStyle(this.theme);
    if (!this.detail) {
      const caps = this.caps?.();
      const maxLines = fleetBudget() - (caps ? 1 : 0);
      const asked = this.promptLines(width, style);
      const list = renderFleet(this.rows, this.selected, {
        width,
        style,
        now: Date.now(),
        maxLines: maxLines - asked.length,
      });
      return [...list, ...(caps ? [clip(style.dim(caps), width)] : []), ...asked];
    }
    const row = this.rows.find((r) => r.id === this.detail!.id);
    const v = this.detail.view;
    // Steer and stop only while it runs or waits: an ended session has nothing to take them.
    const live = !this.detail.ended && (v ? !isFinished(v.status) : isLive(row?.status));
    const name = `${style.bold("Sub-agents")} › ${style.bold(sanitizeLine(row?.name ?? this.detail.id))}`;
    const title = titleLines(name, live ? "s steer · x stop · Esc back" : "Esc back", width, style);
    if (!v)
      return [
        ...title,
        style.dim(`  ${this.detail.ended ? "no record of this session" : "starting…"}`),
        ...this.promptLines(width, style),
      ];
    const asked = this.promptLines(width, style);
    const room = Math.min(DETAIL_MAX, fleetBudget() - title.length - asked.length);
    return [...title, ...fittedWindow(v, room, width, style), ...asked];
  }

  invalidate(): void {}

  dispose(): void {
    clearInterval(this.timer);
    this.closeDetail();
  }
}
