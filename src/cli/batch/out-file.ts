// `--out`: one JSON line per finished item. A run starts the file over from the job's records (every item finished
// before, in file order, minus those that run again), then appends each item as it finishes: after a resumed run
// the file holds exactly one line per finished item, whatever the run before it left (a cut last line included).
import * as fs from "node:fs";
import { finishedLines, type ItemLine } from "../../core/batch/lines.ts";
import type { BatchRecords } from "../../core/store/batch-records.ts";

export class OutFile {
  private constructor(
    private fd: number | null,
    private readonly file: string,
  ) {}

  /** Appends to the file as it is (rewrite starts it over first). */
  static appendTo(file: string): OutFile {
    return new OutFile(fs.openSync(file, "a"), file);
  }

  static rewrite(file: string, records: BatchRecords, job: string): OutFile {
    const tmp = `${file}.${process.pid}.tmp`;
    const fd = fs.openSync(tmp, "w", 0o644);
    try {
      let chunk = "";
      for (const line of finishedLines(records, job)) {
        chunk += `${JSON.stringify(line)}\n`;
        if (chunk.length > 1 << 16) {
          fs.writeSync(fd, chunk);
          chunk = "";
        }
      }
      fs.writeSync(fd, chunk);
    } catch (err) {
      // A full disk: the file as it was stays, no half-written copy beside it.
      fs.closeSync(fd);
      fs.rmSync(tmp, { force: true });
      (err as { path?: string }).path ??= file;
      throw err;
    }
    fs.closeSync(fd);
    fs.renameSync(tmp, file);
    return OutFile.appendTo(file);
  }

  /** One line, written whole in one write (an append of a line never interleaves with another). A failed write
   *  (a full disk) names the file: a write knows only its descriptor. */
  append(line: ItemLine): void {
    if (this.fd === null) return;
    try {
      fs.writeSync(this.fd, `${JSON.stringify(line)}\n`);
    } catch (err) {
      (err as { path?: string }).path ??= this.file;
      throw err;
    }
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}
