// Kept children (src/core/run/process/pool.ts) on and off: `subagents delegate` of N trivial tasks at concurrency C,
// the setting `subagents.reuseChildren` alternated round by round (medians; CPU of the whole process tree).
// `BENCH_ROUNDS=6 bun bench/kept-children.ts` (workloads: 8 at 4, 16 at 4, 8 at 1, and 2 at 1 each streaming a
// 40 KB answer in 4,000 deltas, where a kept child's RPC output would cost most).
import { script } from "../src/scripted/model-server.ts";
import { BIN, ROUNDS, benchWorld, measure, stat, table, type Sample } from "./lib.ts";

const world = await benchWorld();
const ms = (v: number) => `${Math.round(v)} ms`;
try {
  const rows: string[][] = [];
  const long = script([{ text: "word ".repeat(8000), chunks: 4000 }]);
  for (const [n, c, streamed] of [
    [8, 4, false],
    [16, 4, false],
    [8, 1, false],
    [2, 1, true],
  ] as const) {
    const prompts = Array.from({ length: n }, (_, i) => (streamed ? `long answer ${i} ${long}` : `trivial task ${i}`));
    const samples: Record<"on" | "off", Sample[]> = { on: [], off: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of ["on", "off"] as const) {
        world.setSubagentSettings({ reuseChildren: mode === "on" });
        samples[mode].push(
          await measure([BIN, "delegate", ...prompts, "--concurrency", String(c), "--json"], {
            env: world.env,
            cwd: world.workDir,
          }),
        );
      }
    }
    const on = { wall: stat(samples.on.map((s) => s.wallMs)).median, cpu: stat(samples.on.map((s) => s.cpuMs)).median };
    const off = {
      wall: stat(samples.off.map((s) => s.wallMs)).median,
      cpu: stat(samples.off.map((s) => s.cpuMs)).median,
    };
    rows.push([
      `${n} at ${c}${streamed ? ", 40 KB streamed answers" : ""}`,
      `${ms(on.wall)} (CPU ${ms(on.cpu)})`,
      `${ms(off.wall)} (CPU ${ms(off.cpu)})`,
      `${(on.wall / off.wall).toFixed(2)}× (CPU ${(on.cpu / off.cpu).toFixed(2)}×)`,
    ]);
  }
  console.log(`### Kept children on vs off (median of ${ROUNDS} alternating rounds)\n`);
  console.log(table(["tasks", "kept (default)", "a pi per task (reuseChildren: false)", "kept / not kept"], rows));
} finally {
  await world.close();
}
