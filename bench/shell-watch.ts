// What a setup's or hook's owner watch costs (core/run/process/shell-command.ts OWNER_WATCH): the shell that runs the
// command beside a once-a-second look at its owner, against the plain `/bin/sh -c` it replaced, for a command that
// ends at once (`true`: the watch's whole cost) and one of 0.2 s (what a real setup or hook is closer to).
// Usage: bun bench/shell-watch.ts
import { spawnSync } from "node:child_process";
import { OWNER_WATCH } from "../src/core/run/process/shell-command.ts";

const N = Number(process.env.BENCH_N ?? 100);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function time(argv: string[], n: number): number {
  spawnSync(argv[0], argv.slice(1));
  const each: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    spawnSync(argv[0], argv.slice(1));
    each.push(performance.now() - t0);
  }
  return median(each);
}
for (const [label, command, n] of [
  ["true", "true", N],
  ["sleep 0.2", "sleep 0.2", Math.max(5, Math.floor(N / 10))],
] as const) {
  const plain = time(["/bin/sh", "-c", command], n);
  const watched = time(["/bin/sh", "-c", OWNER_WATCH, "subagents-shell", String(process.pid), command], n);
  console.log(
    `${label}: plain ${plain.toFixed(2)} ms, watched ${watched.toFixed(2)} ms (${(watched / plain).toFixed(2)}×, +${(watched - plain).toFixed(2)} ms)`,
  );
}
