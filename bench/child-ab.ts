// A/B of one trivial embedded child between two executables (a change measured against its base): N runs each,
// alternating, median CPU (user+sys) and wall. `bun bench/child-ab.ts A_BIN B_BIN [N]`.
import { benchWorld, measure, stat } from "./lib.ts";

const [a, b] = [process.argv[2], process.argv[3]];
const n = Number(process.argv[4] ?? 20);
if (!a || !b) throw new Error("usage: bun bench/child-ab.ts A_BIN B_BIN [N]");
const world = await benchWorld();
const res: Record<string, { cpu: number[]; wall: number[] }> = { [a]: { cpu: [], wall: [] }, [b]: { cpu: [], wall: [] } };
try {
  for (let i = 0; i < n; i++) {
    for (const bin of i % 2 ? [b, a] : [a, b]) {
      const s = await measure([bin, "-p", "--no-session", `ab ${i}`], { env: { ...world.env, SUBAGENTS_ROLE: "pi" }, cwd: world.workDir });
      if (!s.stdout.trim()) throw new Error(`${bin}: no output`);
      res[bin].cpu.push(s.cpuMs);
      res[bin].wall.push(s.wallMs);
    }
  }
} finally {
  await world.close();
}
for (const [bin, r] of Object.entries(res)) {
  const c = stat(r.cpu), w = stat(r.wall);
  console.log(`${bin}: CPU median ${c.median.toFixed(0)} ms (${c.min.toFixed(0)}–${c.max.toFixed(0)}), wall median ${w.median.toFixed(0)} ms (${w.min.toFixed(0)}–${w.max.toFixed(0)}), n=${n}`);
}
