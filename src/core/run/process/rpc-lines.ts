// The lines of a kept child's RPC output (pool.ts) that the pool acts on: replies to its commands (which carry the
// id it gave: `{"id":…`) and extension dialogs (`{"type":"extension_ui_request"…`). Every other line is one of
// the session's events, which the child extension already reported on fd 3: it is passed over after its first
// bytes, never decoded or kept. A wanted line longer than `maxLine` is dropped too (replies and dialogs are short).
const WANTED = ['{"id":', '{"type":"extension_ui_request"'].map((p) => new TextEncoder().encode(p));
const PROBE = Math.max(...WANTED.map((w) => w.length));

export class RpcLines {
  private parts: Uint8Array[] = [];
  private length = 0;
  /** The current line is not wanted (or too long): its bytes are passed over up to its newline. */
  private skipping = false;
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLine: number,
  ) {}

  push(chunk: Uint8Array): void {
    for (let start = 0; start < chunk.length; ) {
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!this.skipping) this.keep(chunk.subarray(start, end));
      if (nl < 0) return;
      if (!this.skipping && this.length) this.onLine(this.decoder.decode(this.joined()));
      this.parts = [];
      this.length = 0;
      this.skipping = false;
      start = nl + 1;
    }
  }

  private keep(bytes: Uint8Array): void {
    if (!bytes.length) return;
    this.parts.push(bytes.slice());
    this.length += bytes.length;
    if (this.length > this.maxLine) return this.skip();
    const head = this.length >= PROBE || this.parts.length > 1 ? this.joined().subarray(0, PROBE) : bytes;
    if (!WANTED.some((w) => startsWithPart(head, w))) this.skip();
  }

  private skip(): void {
    this.skipping = true;
    this.parts = [];
    this.length = 0;
  }

  private joined(): Uint8Array {
    if (this.parts.length === 1) return this.parts[0];
    const all = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      all.set(p, at);
      at += p.length;
    }
    this.parts = [all];
    return all;
  }
}

/** Whether `head` (possibly shorter than `prefix`, a line's start seen so far) can still begin with `prefix`. */
function startsWithPart(head: Uint8Array, prefix: Uint8Array): boolean {
  const n = Math.min(head.length, prefix.length);
  for (let i = 0; i < n; i++) if (head[i] !== prefix[i]) return false;
  return true;
}
