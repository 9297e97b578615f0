// Write then rename: a concurrent reader (another run, a pi loading the file) sees the old file or the whole new
// one, never half of it. The temporary name carries our pid, so two writers never share it. Everything written this
// way is ours (records, runtime files under pi's agent dir, caches): owner-only unless a caller says otherwise.
import * as fs from "node:fs";
import * as path from "node:path";
import { PRIVATE_DIR, PRIVATE_FILE } from "./private-files.ts";

export function writeFileAtomic(file: string, data: string, opts: { mode?: number; dirMode?: number } = {}): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: opts.dirMode ?? PRIVATE_DIR });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data, { mode: opts.mode ?? PRIVATE_FILE });
  fs.chmodSync(tmp, opts.mode ?? PRIVATE_FILE);
  fs.renameSync(tmp, file);
}
