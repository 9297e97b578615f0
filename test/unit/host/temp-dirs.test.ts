// Which of our temp folders count as left behind (host/temp-dirs.ts): those whose owner's PID and start time name no
// running process — in the system temp folder, and in /tmp where a long TMPDIR sends the short socket folders.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ownTag } from "../../../src/host/process-identity.ts";
import { staleTempDirs } from "../../../src/host/temp-dirs.ts";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A folder named as a process that does not run made it (PID 2^22 + 1 is above Linux's PID limit). */
function leftBy(base: string): string {
  const dir = mkdtempSync(join(base, `subagents-${2 ** 22 + 1}.12345-`));
  made.push(dir);
  return dir;
}

test("a long TMPDIR: folders left in it and in /tmp (where the socket folders go) are both found; a live one is not", () => {
  const long = join(mkdtempSync("/tmp/td-"), "a-temp-folder-path-long-enough-for-the-fallback");
  made.push(long);
  mkdirSync(long, { recursive: true });
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = long;
  try {
    const inTmpdir = leftBy(long);
    const inTmp = leftBy("/tmp");
    const live = mkdtempSync(join(long, `subagents-${ownTag()}-`));
    made.push(live);
    const stale = staleTempDirs();
    expect(stale).toContain(inTmpdir);
    // Another owner of the suite (same /tmp, same time) may have swept it already: that sweep is this code too.
    expect(stale.includes(inTmp) || !existsSync(inTmp), `${inTmp} not taken for left behind`).toBe(true);
    expect(stale).not.toContain(live);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
});
