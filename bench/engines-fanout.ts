// A fan-out per runner: N tasks at once (each one bash call `sleep 1`, then finalize), wall time of the whole
// `delegate` call with the executable's embedded pi. Run: bun bench/engines-fanout.ts [tasks]
import { script } from "../src/scripted/model-server.ts";
import { cli, piWorld, summaryOf } from "../test/support/pi-env.ts";

const n = Number(process.argv[2] ?? 8);
const world = await piWorld();
world.setSubagentSettings({ docker: { image: process.env.IMAGE ?? "subagents-test/base" } });
for (const [label, flags] of [
  ["local", []],
  ["sandbox", ["--sandbox"]],
  ["docker", ["--runner", "docker"]],
  ["slurm", ["--runner", "slurm"]],
  ["slurm+sandbox", ["--runner", "slurm", "--sandbox"]],
] as [string, string[]][]) {
  const tasks = Array.from(
    { length: n },
    (_, i) =>
      `t${i} ${label} ${script([{ tool: "bash", args: { command: "sleep 1" } }, { finalize: { status: "SUCCESS", result: "ok" } }])}`,
  );
  const t = performance.now();
  const r = await cli(world, ["delegate", "--json", "--concurrency", String(n), ...flags, ...tasks], { binary: true });
  const ms = performance.now() - t;
  const bad = summaryOf(r.json).filter((s) => s.status !== "completed");
  console.log(
    `${label.padEnd(14)} ${n} tasks at once: ${(ms / 1000).toFixed(2)} s${bad.length ? ` (${bad.length} failed: ${bad[0].error})` : ""}`,
  );
}
await world.close();
