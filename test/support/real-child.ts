// One real child pi under the runner, against a PiWorld's scripted model: the invocation the engine would build,
// a host that counts the processes it starts, and the run's wall time. Shared by tests and benchmarks.
import { join } from "node:path";
import type { Host } from "../../src/core/host.ts";
import { realClock } from "../../src/core/host.ts";
import type { FinalizeMode } from "../../src/core/run/process/finalize-contract.ts";
import { buildInvocation } from "../../src/core/run/launch/invocation.ts";
import { runChild } from "../../src/core/run/process/runner.ts";
import type { Transport } from "../../src/core/run/process/transport.ts";
import { createBunHost } from "../../src/host/bun.ts";
import { script, type ScriptStep } from "../../src/scripted/model-server.ts";
import { piCmd, REPO, type PiRelease, type PiWorld } from "./pi-env.ts";

export type RealChildOptions = {
  finalize: FinalizeMode;
  transport?: Transport;
  release?: PiRelease;
  childRuntime?: "bun" | "node";
  /**
   * What the child extension is told (default: the same as the runner). "optional" with a runner that requires
   * finalize makes the runner deliver corrective messages the old way, one new process each.
   */
  childFinalize?: FinalizeMode;
};

export async function runRealChild(world: PiWorld, steps: ScriptStep[], opts: RealChildOptions) {
  const transport = opts.transport ?? "compact";
  const host = createBunHost(() => {
    throw new Error("no database here");
  });
  const tag = `${Date.now()}-${Math.random().toString(16).slice(2)}`;
  const sessionFile = join(world.root, `child-${tag}.jsonl`);
  const inv = buildInvocation({
    piCommand: piCmd(opts.release ?? "current", opts.childRuntime ?? "bun"),
    childExtension: join(REPO, "src", "child-extension", "extension.ts"),
    profile: null,
    transport,
    finalize: opts.finalize,
    sessionFile,
    depth: 1,
    maxDepth: 1,
    parentPid: process.pid,
    promptFile: join(world.root, `prompt-${tag}.md`),
    baseEnv: world.env,
  });
  for (const f of inv.files) host.writeFile(f.path, f.content, 0o600);
  if (opts.childFinalize) inv.env.PI_SUBAGENT_FINALIZE = opts.childFinalize;
  let spawns = 0;
  const counting: Host = { ...host, spawn: (spec) => (spawns++, host.spawn(spec)) };
  const t0 = performance.now();
  const result = await runChild(counting, realClock, {
    argv: inv.argv,
    env: inv.env,
    sessionFile,
    cwd: world.workDir,
    prompt: `task ${script(steps)}`,
    transport,
    finalize: opts.finalize,
    timeoutSec: 60,
    extendDebounceSec: 30,
    maxRuntimeSec: 120,
    loopingToolCount: 5,
  });
  return { result, spawns, wallMs: performance.now() - t0 };
}
