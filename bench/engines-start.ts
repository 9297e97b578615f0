// Per-child start cost of the sandbox and the runners: the same trivial command (`/bin/true`) started plainly,
// in the sandbox (the exact bwrap argv children get), in a container (`docker run --rm`, the argv of the docker
// runner) and as a Slurm job step (`srun`). Run: bun bench/engines-start.ts [rounds]   (engines must be set up:
// test/support/engines.sh bwrap|docker|slurm). The task folder is a git repository with a `.pi` folder and a
// `.vscode` one, bound as the task's tree would be (its layer's cost is bench/task-layer.ts's); each timing includes
// building the command. ONLY_BWRAP=1: plain and bwrap only.
import { Database } from "bun:sqlite";
import { mkdtempSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBunHost } from "../src/host/bun.ts";
import { bunDbOpener } from "../src/host/sqlite-bun.ts";
import { defaultSettings } from "../src/core/settings.ts";
import { sandboxed } from "../src/core/run/runners/sandbox-wrap.ts";
import { dockerArgv } from "../src/core/run/runners/docker.ts";
import { srunArgv } from "../src/core/run/runners/slurm.ts";
import { onPath } from "../src/core/run/runners/commands.ts";
import type { PlaceRequest } from "../src/core/run/runners/types.ts";

const rounds = Number(process.argv[2] ?? 20);
const host = createBunHost(bunDbOpener(Database));
const root = mkdtempSync(join(tmpdir(), "engines-bench-"));
const agentDir = join(root, "agent");
mkdirSync(join(agentDir, "subagent-sessions", "x"), { recursive: true });
mkdirSync(join(root, "work", ".pi", "agents"), { recursive: true });
mkdirSync(join(root, "work", ".vscode"));
Bun.spawnSync({ cmd: ["git", "init", "-q", join(root, "work")] });
const req: PlaceRequest = {
  host,
  argv: ["/bin/true"],
  env: { HOME: root },
  cwd: join(root, "work"),
  sessionFile: join(agentDir, "subagent-sessions", "x", "a.jsonl"),
  agentDir,
  files: [],
  sandbox: true,
  name: "bench",
  tree: { writable: [{ path: join(root, "work") }], readable: [] },
  settings: {
    ...defaultSettings(),
    docker: { image: process.env.IMAGE ?? "subagents-test/base", network: "host", args: [] },
  },
};

function time(label: string, argv: () => string[]): void {
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    const a = argv();
    const r = Bun.spawnSync({ cmd: a, stdout: "ignore", stderr: "pipe" });
    ms.push(performance.now() - t);
    if (r.exitCode !== 0) throw new Error(`${label}: exit ${r.exitCode}: ${r.stderr.toString().slice(0, 300)}`);
  }
  ms.sort((x, y) => x - y);
  console.log(
    `${label.padEnd(10)} median ${ms[Math.floor(ms.length / 2)].toFixed(1)} ms  (min ${ms[0].toFixed(1)}, max ${ms.at(-1)!.toFixed(1)}, ${rounds} runs)`,
  );
}

time("plain", () => ["/bin/true"]);
// The same shape before and after sandboxed() returned what it protects, so the bench runs on older commits too.
const boxed = (): string[] => {
  const b = sandboxed(req) as unknown;
  if (typeof b === "string") throw new Error(b);
  return Array.isArray(b) ? b : (b as { argv: string[] }).argv;
};
if (onPath(host, "bwrap")) time("bwrap", boxed);
const docker = onPath(host, "docker");
let n = 0;
if (
  !process.env.ONLY_BWRAP &&
  docker &&
  Bun.spawnSync({ cmd: [docker, "info"], stdout: "ignore", stderr: "ignore" }).exitCode === 0
) {
  time("docker", () =>
    dockerArgv(
      { ...req, name: `subagents-bench-${process.pid}-${n++}`, argv: ["/bin/true"] },
      { docker, user: null, owner: process.pid, host: "bench", agentEntries: [], caches: [] },
    ).filter((a) => a !== "-i"),
  );
}
const srun = onPath(host, "srun");
if (
  !process.env.ONLY_BWRAP &&
  srun &&
  Bun.spawnSync({ cmd: ["sinfo", "-h"], stdout: "ignore", stderr: "ignore" }).exitCode === 0
) {
  time("srun", () => srunArgv({ ...req, name: "subagents-bench" }, srun, ["/bin/true"]));
  time("srun+bwrap", () => srunArgv({ ...req, name: "subagents-bench" }, srun, boxed()));
}
