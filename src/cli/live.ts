// Live ANSI windows on a terminal: redraws the frame in place on a tick (at most 10 frames per second, and only
// when something changed), clipped to the terminal's size, with the cursor hidden while drawing and always
// restored — on normal end, on errors, and on exit however it happens.
import { renderWindows, type Style, type WindowView } from "../ui/windows.ts";

const HIDE = "\x1b[?25l";
const SHOW = "\x1b[?25h";
const FRAME_MS = 100;

export class LiveDisplay {
  private lastHeight = 0;
  private lastFrame = "";
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly restoreOnExit = () => this.out.write(SHOW);

  constructor(
    private readonly views: () => WindowView[],
    private readonly opts: { maxLines: number; style: Style },
    private readonly out: NodeJS.WriteStream = process.stdout,
  ) {}

  start(): void {
    this.out.write(HIDE);
    process.once("exit", this.restoreOnExit);
    this.draw();
    this.timer = setInterval(() => this.draw(), FRAME_MS);
  }

  /** Fits the frame to the terminal: fewer lines per window first, then cut at the bottom. */
  private frame(): string[] {
    const width = Math.max(20, (this.out.columns || 100) - 1);
    const rows = Math.max(5, (this.out.rows || 40) - 1);
    const views = this.views();
    let maxLines = this.opts.maxLines;
    let lines = renderWindows(views, { width, maxLines, expanded: false, style: this.opts.style });
    while (lines.length > rows && maxLines > 0) {
      maxLines = Math.max(0, Math.min(maxLines - 1, Math.floor((rows - 2) / Math.max(1, views.length)) - 2));
      lines = renderWindows(views, { width, maxLines, expanded: false, style: this.opts.style });
    }
    return lines.length > rows ? [...lines.slice(0, rows - 1), this.opts.style.dim(`… ${lines.length - rows + 1} more lines`)] : lines;
  }

  draw(): void {
    const lines = this.frame();
    const text = lines.join("\n");
    if (text === this.lastFrame) return;
    this.lastFrame = text;
    // Up to the top of the previous frame, clear everything below, draw the new one.
    const up = this.lastHeight > 1 ? `\x1b[${this.lastHeight - 1}A` : "";
    this.out.write(`${up}\r\x1b[J${text}`);
    this.lastHeight = lines.length;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.draw();
    this.out.write(`\n${SHOW}`);
    process.off("exit", this.restoreOnExit);
  }
}
