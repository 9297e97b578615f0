// Shared bench helpers: a scripted-model world (same as the tests'), measuring one command (wall, CPU of the
// whole process tree, peak RSS of the top process), and median/min/max over rounds.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { piCmd as piCommand, piWorld, PI_PACKAGE_DIRS, REPO, type PiWorld } from "../test/support/pi-env.ts";

export { REPO, type PiWorld };
// Benchmarks run current pi (the one people install today); its example subagent extension is the yardstick.
export const PI_DIST = join(PI_PACKAGE_DIRS.current, "dist");
export const EXAMPLE_EXT = join(PI_PACKAGE_DIRS.current, "examples", "extensions", "subagent", "index.ts");
export const BIN = join(REPO, "dist", "subagents");
export const BUN = process.execPath;
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

export async function benchWorld(): Promise<PiWorld> {
  const world = await piWorld();
  // An agent for pi's example extension (it reads <agentDir>/agents/*.md): default tools, one model turn.
  mkdirSync(join(world.agentDir, "agents"), { recursive: true });
  writeFileSync(
    join(world.agentDir, "agents", "bench.md"),
    "---\nname: bench\ndescription: benchmark agent\n---\nAnswer briefly.\n",
  );
  return world;
}

export type Sample = { wallMs: number; cpuMs: number; peakRssMB: number; stdout: string };

function vmHwmKB(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(require("node:fs").readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Runs a command once. CPU covers the process and every descendant it waited for. */
export async function measure(
  cmd: string[],
  opts: { env: Record<string, string>; cwd: string; stdin?: string },
): Promise<Sample> {
  const t0 = performance.now();
  const proc = Bun.spawn({
    cmd,
    cwd: opts.cwd,
    env: opts.env,
    stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
    stdout: "pipe",
    stderr: "ignore",
  });
  let peak = 0;
  const poll = setInterval(() => (peak = Math.max(peak, vmHwmKB(proc.pid))), 20);
  const stdout = await new Response(proc.stdout).text();
  await proc.exited;
  clearInterval(poll);
  const wallMs = performance.now() - t0;
  const ru = proc.resourceUsage();
  const cpuMs = ru ? Number(ru.cpuTime.total) / 1000 : 0;
  return { wallMs, cpuMs, peakRssMB: peak / 1024, stdout };
}

export async function rounds(n: number, fn: () => Promise<Sample>): Promise<Sample[]> {
  const out: Sample[] = [];
  for (let i = 0; i < n; i++) out.push(await fn());
  return out;
}

export type Stat = { median: number; min: number; max: number };
export function stat(values: number[]): Stat {
  const s = [...values].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], min: s[0], max: s[s.length - 1] };
}

export const fmt = (s: Stat, unit = "", digits = 0) =>
  `${s.median.toFixed(digits)}${unit} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
export const ratio = (a: number, b: number) => (b === 0 ? "n/a" : `${(a / b).toFixed(2)}×`);

/** A markdown table from rows of cells. */
export function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");
}

/** Current pi under Node 24 (its bundled entry, as npm's `pi` launcher runs it) or under Bun. */
export function piCmd(runtime: "node" | "bun"): string[] {
  return piCommand("current", runtime);
}
