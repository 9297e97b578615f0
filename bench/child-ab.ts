// A/B between two executables (a change measured against its base), alternating, medians of CPU (user+sys, the
// whole process tree) and wall:
//   bun bench/child-ab.ts A_BIN B_BIN [N]             one trivial embedded child (`-p`), N runs each (default 20)
//   bun bench/child-ab.ts A_BIN B_BIN [N] --delegate  `subagents delegate` of 8 trivial tasks at 4, N each (default 8)
import { benchWorld, measure, stat } from "./lib.ts";

const args = process.argv.slice(2).filter((a) => a !== "--delegate");
const delegate = process.argv.includes("--delegate");
const [a, b] = [args[0], args[1]];
const n = Number(args[2] ?? (delegate ? 8 : 20));
if (!a || !b) throw new Error("usage: bun bench/child-ab.ts A_BIN B_BIN [N] [--delegate]");
const world = await benchWorld();
const res: Record<string, { cpu: number[]; wall: number[] }> = {
  [a]: { cpu: [], wall: [] },
  [b]: { cpu: [], wall: [] },
};
try {
  for (let i = 0; i < n; i++) {
    for (const bin of i % 2 ? [b, a] : [a, b]) {
      const s = delegate
        ? await measure(
            [bin, "delegate", ...Array.from({ length: 8 }, (_, k) => `ab ${i} ${k}`), "--concurrency", "4", "--json"],
            { env: world.env, cwd: world.workDir },
          )
        : await measure([bin, "-p", "--no-session", `ab ${i}`], {
            env: { ...world.env, SUBAGENTS_ROLE: "pi" },
            cwd: world.workDir,
          });
      if (!s.stdout.trim()) throw new Error(`${bin}: no output`);
      res[bin].cpu.push(s.cpuMs);
      res[bin].wall.push(s.wallMs);
    }
  }
} finally {
  await world.close();
}
for (const [bin, r] of Object.entries(res)) {
  const c = stat(r.cpu),
    w = stat(r.wall);
  console.log(
    `${bin}: CPU median ${c.median.toFixed(0)} ms (${c.min.toFixed(0)}–${c.max.toFixed(0)}), wall median ${w.median.toFixed(0)} ms (${w.min.toFixed(0)}–${w.max.toFixed(0)}), n=${n}`,
  );
}
