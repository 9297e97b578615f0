// What finding a run's leftovers costs (core/run/process/leftovers.ts): one pass over /proc/<pid>/environ per run
// end, against the spawn and exit of one short process (`true`), the smallest thing a run's end already waits for.
// Usage: bun bench/leftover-scan.ts
import { readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { markedProcesses } from "../src/host/proc-marks.ts";

const N = 200;
const time = (fn: () => void) => {
  fn();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) fn();
  return (performance.now() - t0) / N;
};
const processes = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).length;
const scan = time(() => markedProcesses());
const spawn = time(() => spawnSync("true"));
console.log(
  `${processes} processes: scan ${scan.toFixed(2)} ms, spawn+exit of \`true\` ${spawn.toFixed(2)} ms, ratio ${(scan / spawn).toFixed(2)}`,
);

// The alternative measured for the choice in docs/RELIABILITY.md: a PID namespace per child (util-linux unshare,
// no root through a user namespace), which ends everything in it when its first process exits.
const ns = spawnSync("unshare", ["--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "true"]);
if (ns.status === 0) {
  const unshare = time(() =>
    spawnSync("unshare", ["--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "true"]),
  );
  console.log(
    `a PID namespace per child: unshare+exit ${unshare.toFixed(2)} ms, ${(unshare / spawn).toFixed(2)}× the plain spawn, ${(unshare / scan).toFixed(1)}× the scan`,
  );
} else console.log(`a PID namespace per child: unshare fails here (${ns.stderr.toString().trim()})`);
