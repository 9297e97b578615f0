// Write then rename: a concurrent reader (another run, a pi loading the file) sees the old file or the whole new
// one, never half of it. The temporary name carries our pid, so two writers never share it.
import * as fs from "node:fs";
import * as path from "node:path";

export function writeFileAtomic(file: string, data: string, opts: { mode?: number; dirMode?: number } = {}): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, ...(opts.dirMode === undefined ? {} : { mode: opts.dirMode }) });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data, opts.mode === undefined ? undefined : { mode: opts.mode });
  fs.renameSync(tmp, file);
}
