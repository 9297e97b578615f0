// One trivial embedded child (`-p`) under environment variants, alternating, medians — how the JavaScriptCore
// settings children get (src/host/child-jit.ts) were chosen. Each variant is `name,VAR=value,VAR=value`; "base"
// (the environment as is) always runs:
//   bun bench/child-env.ts BIN N nodfg,BUN_JSC_useDFGJIT=0 late,BUN_JSC_thresholdForOptimizeAfterWarmUp=100000
import { benchWorld, measure, stat } from "./lib.ts";

const [bin, count, ...specs] = process.argv.slice(2);
if (!bin) throw new Error("usage: bun bench/child-env.ts BIN [N] [name,VAR=value,… …]");
const n = Number(count ?? 12);
const variants: Record<string, Record<string, string>> = { base: {} };
for (const spec of specs) {
  const [name, ...pairs] = spec.split(",");
  variants[name] = Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]));
}
const world = await benchWorld();
const res: Record<string, { cpu: number[]; wall: number[] }> = {};
try {
  for (let i = 0; i < n; i++) {
    for (const [name, extra] of Object.entries(variants)) {
      const s = await measure([bin, "-p", "--no-session", `env ${i}`], {
        env: { ...world.env, SUBAGENTS_ROLE: "pi", ...extra },
        cwd: world.workDir,
      });
      if (!s.stdout.trim()) throw new Error(`${name}: no output`);
      (res[name] ??= { cpu: [], wall: [] }).cpu.push(s.cpuMs);
      res[name].wall.push(s.wallMs);
    }
  }
} finally {
  await world.close();
}
for (const [name, r] of Object.entries(res)) {
  const c = stat(r.cpu),
    w = stat(r.wall);
  console.log(
    `${name}: CPU median ${c.median.toFixed(0)} ms (${c.min.toFixed(0)}–${c.max.toFixed(0)}), wall median ${w.median.toFixed(0)} ms, n=${n}`,
  );
}
