// Reads a child's stream to its end (or until the consumer says stop by returning false). A stream error means
// the process is gone; its exit is handled on its own, so the error is not ours to report.
export async function drain(
  stream: AsyncIterable<Uint8Array> | null,
  onChunk: (c: Uint8Array) => boolean | void,
): Promise<void> {
  if (!stream) return;
  try {
    for await (const chunk of stream) if (onChunk(chunk) === false) return;
  } catch {
    // the child is gone
  }
}
