// What a kept child (src/core/run/process/pool.ts) costs per further task: one embedded pi in RPC mode answers N
// trivial prompts, each in a session of its own (`switch_session`, as the pool does), with the wall time of each
// step and the CPU of pi's main thread from /proc/<pid>/schedstat. `bun bench/child-reuse.ts [BIN] [N]` (Linux).
import { readFileSync } from "node:fs";
import { BIN, benchWorld } from "./lib.ts";

const bin = process.argv[2] || BIN;
const n = Number(process.argv[3] ?? 8);
const world = await benchWorld();
const cpuMs = (pid: number) => {
  // ns on the CPU (main thread only: JSC's helper threads are not in it).
  return Number(readFileSync(`/proc/${pid}/schedstat`, "latin1").split(" ")[0]) / 1e6;
};
const jit = {
  BUN_JSC_thresholdForOptimizeAfterWarmUp: "100000",
  BUN_JSC_thresholdForOptimizeAfterLongWarmUp: "100000",
  BUN_JSC_thresholdForOptimizeSoon: "100000",
};
try {
  const proc = Bun.spawn({
    cmd: [bin, "--mode", "rpc", "--session", `${world.workDir}/s-x.jsonl`],
    env: { ...world.env, SUBAGENTS_ROLE: "pi", ...jit },
    cwd: world.workDir,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  const next = async (want: (o: { type?: string; command?: string }) => boolean) => {
    for (;;) {
      const nl = buffered.indexOf("\n");
      if (nl >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          if (want(JSON.parse(line))) return;
        } catch {
          // not JSON: ignore
        }
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("pi exited");
      buffered += decoder.decode(value);
    }
  };
  const send = (o: unknown) => {
    proc.stdin.write(`${JSON.stringify(o)}\n`);
    proc.stdin.flush();
  };
  const per: number[] = [];
  let before = 0;
  for (let i = 0; i < n; i++) {
    const w0 = performance.now();
    if (i > 0) {
      send({ type: "switch_session", sessionPath: `${world.workDir}/s-${i}.jsonl` });
      await next((o) => o.type === "response" && o.command === "switch_session");
    }
    const w1 = performance.now();
    send({ type: "prompt", message: `reuse ${i}` });
    await next((o) => o.type === "agent_end");
    const w2 = performance.now();
    await next((o) => o.type === "agent_settled");
    console.log(
      `task ${i}: switch ${Math.round(w1 - w0)} ms, prompt→end ${Math.round(w2 - w1)} ms, end→settled ${Math.round(performance.now() - w2)} ms`,
    );
    await Bun.sleep(30);
    const now = cpuMs(proc.pid);
    per.push(now - before);
    before = now;
  }
  proc.kill();
  await proc.exited;
  const later = per.slice(1).sort((a, b) => a - b);
  console.log(
    `first task (process start included): ${per[0].toFixed(1)} ms of CPU; each further task in the same process: median ${later[Math.floor(later.length / 2)].toFixed(1)} ms (${later[0].toFixed(1)}–${later.at(-1)!.toFixed(1)}), n=${n}`,
  );
} finally {
  await world.close();
}
