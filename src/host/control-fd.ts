// The parent's end of the control pipe (fd 4 in the child) and of the data pipe (fd 5: a sandboxed child's auth.json)
// as Bun hands them out: a raw, non-blocking fd. What goes through is small (a steer is capped, an auth entry is a few
// KB), so a full pipe is retried briefly rather than buffered.
import * as fs from "node:fs";

export function fdLineWriter(fd: number): {
  write: (line: string) => boolean;
  writeRaw: (text: string) => boolean;
  close: () => void;
} {
  let open = true;
  const writeRaw = (text: string) => {
    if (!open) return false;
    const buf = Buffer.from(text);
    let off = 0;
    for (let spins = 0; off < buf.length; ) {
      try {
        off += fs.writeSync(fd, buf, off);
      } catch (err) {
        if ((err as { code?: string }).code === "EAGAIN" && spins++ < 500) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
          continue;
        }
        open = false;
        return false;
      }
    }
    return true;
  };
  return {
    write: (line) => writeRaw(`${line}\n`),
    writeRaw,
    close() {
      if (!open) return;
      open = false;
      try {
        fs.closeSync(fd);
      } catch {
        // already closed
      }
    },
  };
}
