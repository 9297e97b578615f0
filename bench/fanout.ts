// Fan-out on current pi (DESIGN §2 goals), alternating the contenders round by round, best of ROUNDS:
//  1. CLI: `subagents delegate` of N trivial tasks (children = the pi inside the executable) vs the raw floor,
//     `xargs -P` of `pi -p` under Node 24 and under Bun (the faster floor counts). Goal: 8 at 4 ≤ 0.5× the floor.
//  2. Inside a parent pi 0.87.1 under Node 24: one delegation of 8 trivial children, measured from the parent's
//     tool call to its next model request (the scripted server's arrival times), for our extension as
//     `subagents install` leaves it vs pi's example subagent extension. Goal: ≤ 0.5× the example.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { script } from "../src/scripted/model-server.ts";
import { BIN, EXAMPLE_EXT, REPO, ROUNDS, benchWorld, measure, piCmd, ratio, table, type PiWorld, type Sample } from "./lib.ts";

type Best = { wallMs: number; cpuMs: number };
const best = (xs: Best[]): Best => xs.reduce((a, b) => (b.wallMs < a.wallMs ? b : a));
const ms = (v: number) => `${Math.round(v)} ms`;

/** Wall time from the parent's tool-calling request to its last request (the one that has the children's
 *  results: for a synchronous tool the next one; pi-subagents answers at once and delivers results later). */
function delegationMs(world: PiWorld, from: number, marker: string): number {
  const parent = world.server.requests.slice(from).filter((q) => (q.messages ?? []).some((m) => m.role === "user" && JSON.stringify(m.content).includes(marker)));
  const first = parent[0];
  const last = parent.at(-1);
  if (!first?.receivedAt || !last?.receivedAt || last === first) return Number.NaN;
  return last.receivedAt - first.receivedAt;
}

/** npm pi-subagents, installed once into bench/.cache (not a project dependency: only the bench uses it). */
function piSubagents(): string | null {
  const dir = join(REPO, "bench", ".cache", "pi-subagents");
  const entry = join(dir, "node_modules", "pi-subagents", "index.ts");
  if (existsSync(entry)) return entry;
  const r = spawnSync("npm", ["install", "--no-save", "--ignore-scripts", "--prefix", dir, `pi-subagents@${PI_SUBAGENTS_VERSION}`], { encoding: "utf8", timeout: 300_000 });
  return r.status === 0 && existsSync(entry) ? entry : null;
}
const PI_SUBAGENTS_VERSION = "0.67.0";

export async function fanout(): Promise<string> {
  const world = await benchWorld();
  const { cwd, env } = { cwd: world.workDir, env: world.env };
  const lines: string[] = [];
  try {
    // --- 1. CLI vs the raw floor ---
    for (const [n, c] of [[8, 4], [16, 16]] as const) {
      const prompts = Array.from({ length: n }, (_, i) => `trivial task ${i}`);
      const samples: Record<string, Sample[]> = { cli: [], node: [], bun: [] };
      for (let r = 0; r < ROUNDS; r++) {
        samples.cli.push(await measure([BIN, "delegate", ...prompts, "--concurrency", String(c), "--json"], { env, cwd }));
        for (const rt of ["node", "bun"] as const) {
          const xargs = `printf '%s\\n' ${prompts.map((p) => `'${p}'`).join(" ")} | xargs -P ${c} -I{} sh -c 'echo "{}" | ${piCmd(rt).join(" ")} -p --no-session > /dev/null'`;
          samples[rt].push(await measure(["bash", "-c", xargs], { env, cwd }));
        }
      }
      const cli = best(samples.cli);
      const node = best(samples.node);
      const bun = best(samples.bun);
      const floor = node.wallMs <= bun.wallMs ? node : bun;
      lines.push(`### CLI: ${n} trivial tasks, ${c} at a time (best of ${ROUNDS}, alternating)`, "");
      lines.push(
        table(["runner", "wall", "CPU (whole tree)", "vs fastest floor"], [
          ["`subagents delegate` (embedded pi children)", ms(cli.wallMs), ms(cli.cpuMs), ratio(cli.wallMs, floor.wallMs)],
          [`floor: \`xargs -P ${c}\` of \`node24 pi -p\``, ms(node.wallMs), ms(node.cpuMs), ratio(node.wallMs, floor.wallMs)],
          [`floor: \`xargs -P ${c}\` of \`bun pi -p\``, ms(bun.wallMs), ms(bun.cpuMs), ratio(bun.wallMs, floor.wallMs)],
        ]),
        "",
      );
      if (n === 8) lines.push(`Goal 8 at 4 ≤ 0.50× the fastest floor: ${ratio(cli.wallMs, floor.wallMs)} ${cli.wallMs <= floor.wallMs * 0.5 ? "✓" : "✗"}`, "");
    }

    // --- 2. Inside a parent pi (current pi, Node 24) ---
    const install = spawnSync(BIN, ["install"], { env, encoding: "utf8" });
    if (install.status !== 0) throw new Error(`subagents install failed: ${install.stderr}`);
    const n = 8;
    const psub = piSubagents();
    const who = ["ours", "example", ...(psub ? ["pi-subagents"] : [])] as const;
    const timings: Record<string, number[]> = { ours: [], example: [], "pi-subagents": [] };
    const tasks = Array.from({ length: n }, (_, i) => ({ agent: "bench", task: `trivial ${i}` }));
    const stepsFor: Record<string, unknown[]> = {
      ours: [{ tool: "delegate_to_subagents", args: { tasks: tasks.map((t, i) => ({ name: `t${i}`, prompt: t.task })) } }, { text: "done" }],
      example: [{ tool: "subagent", args: { tasks } }, { text: "done" }],
      // pi-subagents fans out through a workflow script; it answers at once and reports when the children end.
      "pi-subagents": [{ tool: "subagent", args: { workflowScript: `return runs.all(${JSON.stringify(tasks.map((t, i) => ({ key: `t${i}`, ...t })))});` } }, { text: "done" }, { text: "done" }],
    };
    // Ours is auto-discovered where `subagents install` put it; the others are loaded with -e (and ours kept out
    // with --no-extensions, so each parent carries one subagent tool).
    const argsFor: Record<string, string[]> = { ours: [], example: ["--no-extensions", "-e", EXAMPLE_EXT], "pi-subagents": ["--no-extensions", "-e", psub ?? ""] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const w of who) {
        const marker = `bench-${w}-${r}-${Date.now()}`;
        const from = world.server.requests.length;
        // PI_OFFLINE for every parent: offline, pi-subagents' children otherwise stall ~50 s on network look-ups.
        await measure([...piCmd("node"), "-p", "--no-session", ...argsFor[w]], { env: { ...env, PI_OFFLINE: "1" }, cwd, stdin: `${marker} ${script(stepsFor[w] as never)}` });
        timings[w].push(delegationMs(world, from, marker));
      }
    }
    spawnSync(BIN, ["install", "--uninstall"], { env });
    const ours = Math.min(...timings.ours);
    const example = Math.min(...timings.example);
    const theirs = psub ? Math.min(...timings["pi-subagents"]) : Number.NaN;
    lines.push(`### Inside pi (current pi under Node 24): one delegation of ${n} trivial children (best of ${ROUNDS}, alternating)`, "");
    lines.push(
      "From the parent's tool call to its next model request. Ours: the extension as `subagents install` leaves it",
      "(children run the pi inside the installed executable). The example runs its children as `pi` processes.",
      "",
      table(["extension", "delegation", "vs example"], [
        ["subagents (installed)", ms(ours), ratio(ours, example)],
        ["pi's example subagent extension", ms(example), "1.00×"],
        [`npm pi-subagents ${PI_SUBAGENTS_VERSION}`, psub ? ms(theirs) : "not installable here", psub ? ratio(theirs, example) : "n/a"],
      ]),
      "",
      `Goal ≤ 0.50× the example: ${ratio(ours, example)} ${ours <= example * 0.5 ? "✓" : "✗"}`,
      psub ? `Goal ≤ 0.25× pi-subagents: ${ratio(ours, theirs)} ${ours <= theirs * 0.25 ? "✓" : "✗"}` : "",
      "",
    );
  } finally {
    await world.close();
  }
  return lines.join("\n");
}

if (import.meta.main) console.log(await fanout());
