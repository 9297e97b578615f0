// Live ANSI windows on a terminal: redraws the frame in place on a tick (at most 10 frames per second, and only
// when something changed), fitted to the terminal's size, with the cursor hidden while drawing and always
// restored — on normal end, on errors, and on exit however it happens.
//
// Redraws touch only the frame's own rows: the cursor goes back to the frame's first row, every line is
// rewritten and erased to its end (ESC[K), and rows the old frame had beyond the new one are erased one by one.
// Never ESC[J: at the top-left corner tmux turns it into "clear screen", which copies the screen into the
// scrollback on every frame. Each frame is one synchronized update (ESC[?2026h … l), so no half-drawn frames.
import { fitFrame } from "../../ui/frame.ts";
import { visibleWidth } from "../../ui/text-width.ts";
import type { Style, WindowView } from "../../ui/windows.ts";

const HIDE = "\x1b[?25l";
const SHOW = "\x1b[?25h";
const SYNC_ON = "\x1b[?2026h";
const SYNC_OFF = "\x1b[?2026l";
const SAVE = "\x1b7";
const RESTORE = "\x1b8";
const FRAME_MS = 100;

type Tty = Pick<NodeJS.WriteStream, "write" | "columns" | "rows" | "on" | "off"> & {
  getWindowSize?: () => [number, number];
};

export class LiveDisplay {
  /** Visible widths of the lines on screen; the cursor sits at the end of the last one. */
  private shown: number[] = [];
  private shownCols = 0;
  private lastFrame = "";
  private note: string | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private stopped = false;
  private paused = false;
  private readonly restoreOnExit = () => this.out.write(SHOW);
  private readonly onResize = () => this.draw();

  constructor(
    private readonly views: () => WindowView[],
    private readonly opts: { maxLines: number; style: Style },
    private readonly out: Tty = process.stdout,
  ) {}

  private size: [number, number] = [100, 40];

  /** Asks the terminal itself: `columns` is refreshed only when SIGWINCH is handled, after tmux has already
   * re-wrapped the screen, and a frame drawn for the old width in between leaves pieces behind. */
  private measure(): void {
    try {
      const [cols, rows] = this.out.getWindowSize?.() ?? [this.out.columns, this.out.rows];
      this.size = [cols || 100, rows || 40];
    } catch {
      this.size = [this.out.columns || 100, this.out.rows || 40];
    }
  }

  protected get cols(): number {
    return this.size[0];
  }

  protected get rows(): number {
    return this.size[1];
  }

  start(): void {
    this.out.write(HIDE);
    process.once("exit", this.restoreOnExit);
    this.out.on("resize", this.onResize);
    this.draw();
    this.timer = setInterval(() => this.draw(), FRAME_MS);
  }

  /** A line under the windows, e.g. "stopping… press Ctrl-C again to force". */
  setNote(text: string | null): void {
    this.note = text;
    this.draw();
  }

  /** The live frame: one column and one row kept free, so nothing ever wraps or scrolls the frame's top away. */
  protected frame(): string[] {
    const width = Math.max(20, this.cols - 1);
    const note = this.note ? [this.opts.style.yellow(this.note)] : [];
    const rows = Math.max(3, this.rows - 1 - note.length);
    return [...fitFrame(this.views(), { width, rows, maxLines: this.opts.maxLines, style: this.opts.style }), ...note];
  }

  draw(final?: string[]): void {
    if (this.stopped || this.paused) return;
    this.measure();
    const lines = final ?? this.frame();
    const text = lines.join("\n");
    if (text === this.lastFrame && this.cols === this.shownCols) return;
    this.lastFrame = text;
    this.out.write(`${SYNC_ON}${this.erase(lines.length)}${lines.map((l) => `${l}\x1b[K`).join("\r\n")}${SYNC_OFF}`);
    this.shown = lines.map(visibleWidth);
    this.shownCols = this.cols;
  }

  /** Moves to the old frame's first row; erases what the new frame (of `height` rows) will not overwrite. */
  private erase(height: number): string {
    if (!this.shown.length) return "\r";
    if (this.cols === this.shownCols) {
      const up = this.shown.length - 1;
      const extra = this.shown.length - height;
      const tail = extra > 0 ? `${SAVE}\x1b[${height}B${"\x1b[2K\x1b[B".repeat(extra)}${RESTORE}` : "";
      return `${up ? `\x1b[${up}A` : ""}\r${tail}`;
    }
    // Resized: the terminal re-wrapped our old lines to the new width (tmux, iTerm2, VTE, kitty do). Go up by
    // the rows they take now, then erase from there to the bottom of the screen, row by row.
    const cols = this.cols;
    const rowsOf = (w: number) => Math.max(1, Math.ceil(w / cols));
    const above = this.shown.slice(0, -1).reduce((n, w) => n + rowsOf(w), 0) + Math.floor(this.shown.at(-1)! / cols);
    const up = Math.min(above, this.rows - 1);
    return `${up ? `\x1b[${up}A` : ""}\r${SAVE}${"\x1b[2K\x1b[B".repeat(this.rows)}${RESTORE}`;
  }

  /** Leaves the frame as it is and the cursor below it, visible: a child's question is asked there (terminal/ask.ts). */
  pause(): void {
    if (this.stopped || this.paused) return;
    this.paused = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.out.write(`\r\n${SHOW}`);
  }

  /** Draws a fresh frame below what was written meanwhile, and goes on redrawing. */
  resume(): void {
    if (this.stopped || !this.paused) return;
    this.paused = false;
    this.shown = [];
    this.lastFrame = "";
    this.out.write(HIDE);
    this.draw();
    this.timer = setInterval(() => this.draw(), FRAME_MS);
  }

  /** Replaces the live frame with the final one (any height), leaves the cursor below it and visible. */
  stop(final?: string[]): void {
    if (this.stopped) return;
    if (this.paused) {
      this.paused = false;
      this.shown = [];
    }
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.out.off("resize", this.onResize);
    this.lastFrame = "";
    this.draw(final);
    this.stopped = true;
    this.out.write(`\r\n${SHOW}`);
    process.off("exit", this.restoreOnExit);
  }
}
