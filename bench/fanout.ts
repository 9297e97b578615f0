// Fan-out: N trivial sub-agents, 4 at a time. Ours (CLI and extension in a parent pi) vs pi's example subagent
// extension in a parent pi vs the floor (the same `pi -p` children started by `xargs -P 4`).
import { join } from "node:path";
import { script } from "../src/scripted/model-server.ts";
import { BIN, BUN, EXAMPLE_EXT, PI_DIST, REPO, ROUNDS, benchWorld, fmt, measure, piCmd, ratio, rounds, stat, table, type Sample } from "./lib.ts";

export async function fanout(): Promise<string> {
  const world = await benchWorld();
  const cwd = world.workDir;
  const env = world.env;
  const lines: string[] = [];
  const results: Record<string, Sample[]> = {};
  try {
    for (const n of [8, 16]) {
      const prompts = Array.from({ length: n }, (_, i) => `trivial task ${i}`);
      results[`ours-cli-${n}`] = await rounds(ROUNDS, () => measure([BIN, "delegate", ...prompts, "--concurrency", "4", "--json"], { env, cwd }));
      for (const rt of ["bun", "node"] as const) {
        const xargs = `printf '%s\\n' ${prompts.map((p) => `'${p}'`).join(" ")} | xargs -P 4 -I{} sh -c 'echo "{}" | ${piCmd(rt).join(" ")} -p --no-session > /dev/null'`;
        results[`floor-${rt}-${n}`] = await rounds(ROUNDS, () => measure(["bash", "-c", xargs], { env, cwd }));
      }
      // Parent pi + extension: one model turn calls the tool with all tasks, then the parent answers.
      const ours = script([{ tool: "delegate_to_subagents", args: { tasks: prompts.map((p, i) => ({ name: `t${i}`, prompt: p })) } }, { text: "done" }]);
      for (const rt of ["bun", "node"] as const) {
        results[`ours-ext-${rt}-${n}`] = await rounds(ROUNDS, () => measure([...piCmd(rt), "-p", "--no-session", "-e", join(REPO, "dist", "extension.js")], { env, cwd, stdin: `go ${ours}` }));
        if (n <= 8) {
          // The example caps one call at 8 parallel tasks.
          const theirs = script([{ tool: "subagent", args: { tasks: prompts.map((p) => ({ agent: "bench", task: p })) } }, { text: "done" }]);
          results[`example-${rt}-${n}`] = await rounds(ROUNDS, () => measure([...piCmd(rt), "-p", "--no-session", "-e", EXAMPLE_EXT], { env, cwd, stdin: `go ${theirs}` }));
        }
      }
    }
  } finally {
    await world.close();
  }
  const wall = (k: string) => stat(results[k].map((s) => s.wallMs));
  const cpu = (k: string) => stat(results[k].map((s) => s.cpuMs));
  const row = (label: string, k: string, vs: string) => (results[k] ? [label, fmt(wall(k), " ms"), fmt(cpu(k), " ms"), ratio(wall(vs).median, wall(k).median)] : [label, "n/a", "n/a", "n/a"]);
  for (const n of [8, 16]) {
    const base = n <= 8 ? `example-node-${n}` : `ours-ext-node-${n}`;
    lines.push(`### ${n} trivial sub-agents, 4 at a time (${ROUNDS} rounds: median (min–max))`, "");
    lines.push(
      table(["runner", "wall", "CPU (whole tree)", `speed-up vs ${n <= 8 ? "example in Node pi" : "ours in Node pi"}`], [
        row("`subagents delegate` (CLI, Bun children)", `ours-cli-${n}`, base),
        row("Bun pi + our extension", `ours-ext-bun-${n}`, base),
        row("Node pi + our extension", `ours-ext-node-${n}`, base),
        row("Bun pi + pi's example extension", `example-bun-${n}`, base),
        row("Node pi + pi's example extension", `example-node-${n}`, base),
        row("floor: `xargs -P 4` of `bun pi -p`", `floor-bun-${n}`, base),
        row("floor: `xargs -P 4` of `node pi -p`", `floor-node-${n}`, base),
      ]),
      "",
      `Ours (CLI) vs the Bun floor: ${ratio(wall(`ours-cli-${n}`).median, wall(`floor-bun-${n}`).median)} of its wall time.`,
      "",
    );
  }
  void BUN;
  void PI_DIST;
  return lines.join("\n");
}

if (import.meta.main) console.log(await fanout());
