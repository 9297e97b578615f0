// What the checks at the edges cost: the store's pre-check every call makes before anything starts
// (Store.checkWritable: free space, and a write rolled back), against the records one task writes anyway (its
// session, its run, its end); and the sweep for killed owners' temp folders each process makes once
// (host/temp-dirs.ts), against the spawn and exit of one short process (`true`). Alternating rounds, medians.
// Usage: bun bench/edge-checks.ts
import { Database } from "bun:sqlite";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../src/core/store/store.ts";
import { emptyUsage, type RunResult } from "../src/core/types.ts";
import { freeBytes } from "../src/host/fs-parts.ts";
import { bunDbOpener } from "../src/host/sqlite-bun.ts";
import { staleTempDirs } from "../src/host/temp-dirs.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const N = 100;
const dir = mkdtempSync(join(tmpdir(), "bench-edges-"));
const file = join(dir, "s.db");
const store = new Store(bunDbOpener(Database)(file), {
  isAlive: () => true,
  file,
  freeBytes: () => freeBytes(dir),
});
const result: RunResult = {
  status: "completed",
  output: "done",
  finalized: false,
  usage: emptyUsage(),
  exitCode: 0,
  toolCount: 0,
  messages: [{ role: "user", text: "the task" }],
  stderrTail: "",
  durationMs: 1,
};
const perOp = (fn: () => void) => {
  const t0 = performance.now();
  for (let i = 0; i < N; i++) fn();
  return (performance.now() - t0) / N;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const check: number[] = [];
const records: number[] = [];
const sweep: number[] = [];
const spawn: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  check.push(perOp(() => store.checkWritable()));
  records.push(
    perOp(() => {
      const id = store.newSessionId();
      store.createSession({ id, name: "t", agent: "default", cwd: dir });
      store.finishRun(store.startRun(id, { prompt: "the task", ownerPid: process.pid }), result);
    }),
  );
  sweep.push(perOp(() => staleTempDirs()));
  spawn.push(perOp(() => spawnSync("true")));
}
const [c, w, s, p] = [median(check), median(records), median(sweep), median(spawn)];
console.log(`store pre-check ${c.toFixed(3)} ms vs one task's records ${w.toFixed(3)} ms: ${(c / w).toFixed(2)}×`);
console.log(
  `temp-folder sweep over ${readdirSync(tmpdir()).length} entries of ${tmpdir()} ${s.toFixed(3)} ms vs spawn+exit of \`true\` ${p.toFixed(3)} ms: ${(s / p).toFixed(2)}×`,
);
rmSync(dir, { recursive: true, force: true });
