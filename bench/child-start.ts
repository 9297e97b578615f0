// One child's start: from spawn to its first model request (arrival time at the scripted server, same clock), and
// its peak RSS, for the pi inside our executable vs current pi under Node 24 and under Bun. Plus the executable's
// size (goal ≤ 150 MB). Alternating, best of ROUNDS.
import { statSync } from "node:fs";
import { BIN, ROUNDS, benchWorld, measure, piCmd, ratio, table } from "./lib.ts";

export async function childStart(): Promise<string> {
  const world = await benchWorld();
  const contenders: Record<string, { cmd: string[]; env: Record<string, string> }> = {
    "embedded (`subagents` pi role)": { cmd: [BIN], env: { SUBAGENTS_ROLE: "pi" } },
    "pi under Node 24": { cmd: piCmd("node"), env: {} },
    "pi under Bun": { cmd: piCmd("bun"), env: {} },
  };
  const best: Record<string, { first: number; wall: number; cpu: number; rss: number }> = {};
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const [label, c] of Object.entries(contenders)) {
        const from = world.server.requests.length;
        const t0 = performance.now();
        const s = await measure([...c.cmd, "-p", "--no-session", `start ${label} ${r}`], {
          env: { ...world.env, ...c.env },
          cwd: world.workDir,
        });
        const first = (world.server.requests[from]?.receivedAt ?? Number.NaN) - t0;
        const prev = best[label];
        best[label] = {
          first: Math.min(prev?.first ?? Infinity, first),
          wall: Math.min(prev?.wall ?? Infinity, s.wallMs),
          cpu: Math.min(prev?.cpu ?? Infinity, s.cpuMs),
          rss: Math.min(prev?.rss ?? Infinity, s.peakRssMB),
        };
      }
    }
  } finally {
    await world.close();
  }
  const node = best["pi under Node 24"];
  const rows = Object.entries(best).map(([label, b]) => [
    label,
    `${Math.round(b.first)} ms`,
    `${Math.round(b.wall)} ms`,
    `${Math.round(b.cpu)} ms`,
    `${Math.round(b.rss)} MB`,
    ratio(b.wall, node.wall),
  ]);
  const size = statSync(BIN).size / 2 ** 20;
  return [
    `### One child: spawn → first model request (best of ${ROUNDS}, alternating)`,
    "",
    table(["child", "to first request", "whole `-p` run", "CPU", "peak RSS", "wall vs Node 24"], rows),
    "",
    `Executable size: ${size.toFixed(0)} MB (goal ≤ 150 MB) ${size <= 150 ? "✓" : "✗"}`,
    "",
  ].join("\n");
}

if (import.meta.main) console.log(await childStart());
