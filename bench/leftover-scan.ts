// What finding a run's leftovers costs (core/run/process/leftovers.ts), as a run's end does it: the processes that
// carry its mark (host/proc-marks.ts markedUnder). Against reading every process's environment at every scan, which
// is what it did before processes known to carry no mark were remembered, and against the spawn and exit of one
// short process (`true`), the smallest thing a run's end already waits for. CPU time of this process (the scan's
// cost to an owner), wall time, 16 marked processes standing in for a batch's kept children.
// Usage: bun bench/leftover-scan.ts
import { spawn, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { MARK_ENV } from "../src/core/run/process/marks.ts";
import { markedUnder, processesWithEnv } from "../src/host/proc-marks.ts";

const N = 300;
const measure = (fn: () => void) => {
  fn();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) fn();
  const cpu = process.cpuUsage(cpu0);
  return { wall: (performance.now() - t0) / N, cpu: (cpu.user + cpu.system) / 1000 / N };
};

const mark = `${process.pid}.bench.${Date.now()}`;
const kept = Array.from({ length: 16 }, (_, i) =>
  spawn("sleep", ["600"], { env: { ...process.env, [MARK_ENV]: `${mark}/w${i}` }, stdio: "ignore" }),
);
try {
  await new Promise((r) => setTimeout(r, 300));
  const processes = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).length;
  // Before: every environ read at every scan, every marked process's command line and state read, then filtered.
  const before = measure(() => processesWithEnv(MARK_ENV).filter((p) => p.value.startsWith(`${mark}/w3`)));
  const after = measure(() => markedUnder(`${mark}/w3`));
  const spawnTrue = measure(() => spawnSync("true"));
  const ms = (n: number) => `${n.toFixed(3)} ms`;
  console.log(`${processes} processes, 16 of them marked (a batch's kept children), ${N} scans each:`);
  console.log(`| scan | CPU per scan | wall per scan |`);
  console.log(`|---|---|---|`);
  console.log(`| every environ, every scan (before) | ${ms(before.cpu)} | ${ms(before.wall)} |`);
  console.log(`| known-unmarked remembered (markedUnder) | ${ms(after.cpu)} | ${ms(after.wall)} |`);
  console.log(`| spawn+exit of \`true\` | ${ms(spawnTrue.cpu)} | ${ms(spawnTrue.wall)} |`);
  console.log(
    `after / before: CPU ${(after.cpu / before.cpu).toFixed(2)}×, wall ${(after.wall / before.wall).toFixed(2)}×`,
  );

  // The alternative measured for the choice in docs/RELIABILITY.md: a PID namespace per child (util-linux unshare,
  // no root through a user namespace), which ends everything in it when its first process exits.
  const ns = spawnSync("unshare", ["--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "true"]);
  if (ns.status === 0) {
    const unshare = measure(() =>
      spawnSync("unshare", ["--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "true"]),
    ).wall;
    console.log(
      `a PID namespace per child: unshare+exit ${ms(unshare)}, ${(unshare / spawnTrue.wall).toFixed(2)}× the plain spawn, ${(unshare / after.wall).toFixed(1)}× the scan`,
    );
  } else console.log(`a PID namespace per child: unshare fails here (${ns.stderr.toString().trim()})`);
} finally {
  for (const p of kept) p.kill("SIGKILL");
}
