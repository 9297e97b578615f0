// What closing a sandboxed child's network costs (subagents.sandboxNetwork "model" vs "all", today's sandbox):
//  1. bwrap around /bin/true: the exact argv children get, with the network namespace, the proxy socket bound in,
//     and the owner's proxy started and closed inside each timing;
//  2. a whole sandboxed child (`subagents run default … --sandbox`, the embedded pi against the scripted model on
//     127.0.0.1): its model calls go through the forwarder and the proxy.
// Alternating, medians and min. Run: bun bench/sandbox-network.ts [rounds]   (bwrap installed; dist/subagents built)
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBunHost } from "../src/host/bun.ts";
import { bunDbOpener } from "../src/host/sqlite-bun.ts";
import { defaultSettings } from "../src/core/settings.ts";
import { sandboxedChild } from "../src/core/run/runners/sandbox-wrap.ts";
import type { PlaceRequest } from "../src/core/run/runners/types.ts";
import { BIN, benchWorld, measure, ratio, stat, table } from "./lib.ts";

const rounds = Number(process.argv[2] ?? 20);
const host = createBunHost(bunDbOpener(Database));
const root = mkdtempSync(join(tmpdir(), "net-bench-"));
const agentDir = join(root, "agent");
mkdirSync(join(agentDir, "subagent-sessions", "x"), { recursive: true });
mkdirSync(join(root, "work"), { recursive: true });
const req = (network: "all" | "model"): PlaceRequest => ({
  host,
  argv: ["/bin/true"],
  // The pi role's shape (its forwarder runs inside pi): /bin/true stands in for it here.
  env: { HOME: root, SUBAGENTS_ROLE: "pi" },
  cwd: join(root, "work"),
  sessionFile: join(agentDir, "subagent-sessions", "x", "a.jsonl"),
  agentDir,
  files: [],
  sandbox: true,
  name: "bench",
  tree: { writable: [{ path: join(root, "work") }], readable: [] },
  settings: { ...defaultSettings(), sandboxNetwork: network },
  network: { allow: ["127.0.0.1:9"] },
});

async function once(network: "all" | "model"): Promise<number> {
  const t = performance.now();
  const placed = await sandboxedChild(req(network));
  if (typeof placed === "string") throw new Error(placed);
  const r = Bun.spawnSync({ cmd: placed.argv, env: placed.env, stdout: "ignore", stderr: "pipe" });
  await placed.cleanup?.();
  const ms = performance.now() - t;
  if (r.exitCode !== 0) throw new Error(`${network}: exit ${r.exitCode}: ${r.stderr.toString().slice(0, 300)}`);
  return ms;
}

const bw = { all: [] as number[], model: [] as number[] };
for (let i = 0; i < rounds; i++) for (const n of ["all", "model"] as const) bw[n].push(await once(n));

const world = await benchWorld();
const child = { all: [] as number[], model: [] as number[] };
const childRounds = Math.max(3, Math.ceil(rounds / 3));
try {
  for (let i = 0; i < childRounds; i++) {
    for (const n of ["all", "model"] as const) {
      world.setSubagentSettings({ sandboxNetwork: n });
      const s = await measure([BIN, "run", "default", `hello ${n} ${i}`, "--sandbox", "--json"], {
        env: world.env,
        cwd: world.workDir,
      });
      if (!s.stdout.includes('"completed"')) throw new Error(`child (${n}) did not complete: ${s.stdout.slice(-400)}`);
      child[n].push(s.wallMs);
    }
  }
} finally {
  await world.close();
}

const row = (label: string, v: { all: number[]; model: number[] }, n: number) => {
  const a = stat(v.all);
  const m = stat(v.model);
  return [
    label,
    `${a.median.toFixed(1)} ms (min ${a.min.toFixed(1)})`,
    `${m.median.toFixed(1)} ms (min ${m.min.toFixed(1)})`,
    `${(m.median - a.median).toFixed(1)} ms`,
    ratio(m.median, a.median),
    String(n),
  ];
};
console.log(
  table(
    ["start", 'network "all" (host)', 'network "model" (closed)', "difference", "ratio", "runs each"],
    [row("bwrap /bin/true (+ proxy up/down)", bw, rounds), row("sandboxed child, whole `run`", child, childRounds)],
  ),
);
