// What `subagents batch` says at its end and when its results file cannot be written (cli/batch/): the hint after a
// stop names what goes on (a larger --max-cost when the job's own budget stopped it), a failed write names its file.
import { expect, test } from "bun:test";
import { BatchView } from "../../../src/cli/batch/batch-view.ts";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OutFile } from "../../../src/cli/batch/out-file.ts";
import { batchArgs } from "../../../src/cli/batch/run-batch.ts";
import { fileSystemLine } from "../../../src/cli/errors.ts";
import type { JobSpec } from "../../../src/core/batch/job.ts";
import { emptyUsage } from "../../../src/core/types.ts";
import { plainStyle } from "../../../src/ui/windows.ts";

const counts = (o: Partial<Record<string, number>>) => ({
  pending: 0,
  running: 0,
  completed: 0,
  failed: 0,
  total: 10,
  cost: 0,
  endedThisRun: 0,
  ...o,
});

function finalLines(spec: Partial<JobSpec>, end: { counts: ReturnType<typeof counts>; stoppedBy?: string }): string[] {
  const said: string[] = [];
  const out = { write: (s: string) => said.push(s.trimEnd()) > 0, isTTY: false } as unknown as NodeJS.WriteStream;
  const progress = {
    job: "j",
    counts: end.counts,
    running: new Map(),
    failures: [],
    startedAt: 0,
    live: new Map(),
  };
  new BatchView(progress, spec as JobSpec, plainStyle, { quiet: true, out }).final({ ...end, elapsedMs: 1000 });
  return said;
}

test("the end of a stopped job says how to go on: the same command, or a larger --max-cost when its budget is spent", () => {
  const budget = finalLines(
    { maxCost: 0.05 },
    { counts: counts({ completed: 7, pending: 3, cost: 0.052 }), stoppedBy: "the job's budget of $0.05 is spent" },
  );
  expect(budget[1]).toBe("stopped: the job's budget of $0.05 is spent; run it again with a larger --max-cost to go on");
  const signal = finalLines({}, { counts: counts({ completed: 7, pending: 3 }), stoppedBy: "stopped by SIGTERM" });
  expect(signal[1]).toBe("stopped: stopped by SIGTERM; run the same command again to go on");
  // Failed items are in the results already (export without --all): the hint had sent people to --all.
  const failed = finalLines({}, { counts: counts({ completed: 9, failed: 1 }) });
  expect(failed[1]).toContain('status "failed" in the results (subagents batch export j)');
  expect(failed[1]).not.toContain("--all");
});

test("--out in a folder that does not exist, or naming a folder, is refused before anything is recorded", () => {
  const dir = mkdtempSync(join(tmpdir(), "subagents-out-"));
  try {
    const items = join(dir, "items.jsonl");
    writeFileSync(items, '{"id":"a"}\n');
    const args = (out: string) => batchArgs("batch", { prompt: "do {{id}}", out } as never, [items]);
    // It had failed as the run started writing: "internal error: ENOENT …" and a stack, the job recorded stopped.
    expect(() => args(join(dir, "missing", "out.jsonl"))).toThrow(/--out .*: the folder .*missing does not exist/);
    expect(() => args(dir)).toThrow(/is a folder; name the results file/);
    expect(args(join(dir, "out.jsonl")).out).toBe(join(dir, "out.jsonl"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a results file that cannot be written (a full disk) is named in the error", () => {
  const out = OutFile.appendTo("/dev/full");
  let err: unknown;
  try {
    out.append({ id: "a", status: "completed", attempts: 1, usage: emptyUsage(), cost: 0 });
  } catch (e) {
    err = e;
  } finally {
    out.close();
  }
  expect(fileSystemLine(err)).toBe("disk full: cannot write /dev/full");
});
