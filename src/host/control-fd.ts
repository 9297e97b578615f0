// The parent's end of the control pipe (fd 4 in the child) as Bun hands it out: a raw, non-blocking fd.
// Control lines are small (a steer is capped), so a full pipe is retried briefly rather than buffered.
import * as fs from "node:fs";

export function fdLineWriter(fd: number): { write: (line: string) => boolean; close: () => void } {
  let open = true;
  return {
    write(line) {
      if (!open) return false;
      const buf = Buffer.from(`${line}\n`);
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
    },
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
