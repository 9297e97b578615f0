// Splits a byte stream into text lines with bounded memory.
// UTF-8 is decoded in streaming mode, so a character split across two chunks is never mangled.
// Each line is kept whole up to `maxLine` characters; beyond that only the first `maxLine` characters are kept
// and the line is reported as cut. A caller may also ask to keep only the head of lines it will never parse
// in full (pi's JSON mode repeats the whole message on every delta: those lines can be megabytes).

export type LineHandler = (line: string, cut: boolean) => void;

export class LineSplitter {
  private readonly decoder = new TextDecoder("utf-8");
  private parts: string[] = [];
  private length = 0;
  private cut = false;
  /** Keep-limit of the current line, decided once its head is known. */
  private limit: number;

  constructor(
    private readonly onLine: LineHandler,
    private readonly maxLine: number,
    /** Given the first characters of a line, how many characters of it are worth keeping. */
    private readonly keepOf: (head: string) => number = () => maxLine,
    private readonly headProbe = 96,
  ) {
    this.limit = maxLine;
  }

  push(chunk: Uint8Array): void {
    this.feed(this.decoder.decode(chunk, { stream: true }));
  }

  end(): void {
    this.feed(this.decoder.decode());
    if (this.length > 0 || this.parts.length > 0) this.emit();
  }

  private feed(text: string): void {
    let start = 0;
    while (start < text.length) {
      const nl = text.indexOf("\n", start);
      const stop = nl === -1 ? text.length : nl;
      this.append(text, start, stop);
      if (nl === -1) return;
      this.emit();
      start = nl + 1;
    }
  }

  private append(text: string, from: number, to: number): void {
    if (to <= from) return;
    const before = this.length;
    if (before < this.headProbe && before + (to - from) >= this.headProbe) {
      // Decide the keep-limit once the head is visible.
      const head = this.parts.join("") + text.slice(from, from + (this.headProbe - before));
      this.limit = Math.min(this.maxLine, this.keepOf(head));
    }
    const room = this.limit - before;
    if (room <= 0) {
      this.cut = true;
      return;
    }
    const take = Math.min(room, to - from);
    this.parts.push(from === 0 && to === text.length && take === text.length ? text : text.slice(from, from + take));
    this.length += take;
    if (take < to - from) this.cut = true;
  }

  private emit(): void {
    let line = this.parts.length === 1 ? this.parts[0] : this.parts.join("");
    if (line.endsWith("\r")) line = line.slice(0, -1);
    const cut = this.cut;
    this.parts = [];
    this.length = 0;
    this.cut = false;
    this.limit = this.maxLine;
    // Lines shorter than the probe never had the policy applied; policies only ever shorten long lines.
    if (line.length === 0 && !cut) return;
    this.onLine(line, cut);
  }
}
