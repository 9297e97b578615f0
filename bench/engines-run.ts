// One whole child run (the executable's embedded pi, one model turn against the scripted server) per runner and
// with the sandbox: what a user waits for, median of N. Run: bun bench/engines-run.ts [rounds]
import { cli, piWorld, summaryOf } from "../test/support/pi-env.ts";

const rounds = Number(process.argv[2] ?? 5);
const world = await piWorld();
world.setSubagentSettings({ docker: { image: process.env.IMAGE ?? "subagents-test/base" } });
for (const [label, flags] of [
  ["local", []],
  ["sandbox", ["--sandbox"]],
  ["docker", ["--runner", "docker"]],
  ["slurm", ["--runner", "slurm"]],
  ["slurm+sandbox", ["--runner", "slurm", "--sandbox"]],
] as [string, string[]][]) {
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    const r = await cli(world, ["run", "default", `hello ${i}`, "--json", ...flags], { binary: true });
    ms.push(performance.now() - t);
    const s = summaryOf(r.json)[0];
    if (s.status !== "completed") throw new Error(`${label}: ${s.error}`);
  }
  ms.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(14)} median ${ms[Math.floor(ms.length / 2)].toFixed(0)} ms (min ${ms[0].toFixed(0)}, ${rounds} runs, whole CLI run)`,
  );
}
await world.close();
