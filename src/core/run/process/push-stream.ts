// A byte stream fed by hand: what a pooled child's lease (pool.ts) hands the runner in place of a process's own
// pipes. Chunks pushed before anyone reads are kept; end() lets the reader finish after the last of them.

export class PushStream implements AsyncIterable<Uint8Array> {
  private readonly chunks: Uint8Array[] = [];
  private wake: (() => void) | null = null;
  private ended = false;

  push(chunk: Uint8Array): void {
    if (this.ended) return;
    this.chunks.push(chunk);
    this.signal();
  }

  end(): void {
    this.ended = true;
    this.signal();
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      const next = this.chunks.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}
