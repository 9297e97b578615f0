// Fan-out on current pi (docs/BENCHMARKS.md), alternating the contenders round by round, best of ROUNDS:
//  1. CLI: `subagents delegate` of N trivial tasks (children = the pi inside the executable) vs the raw floor,
//     `xargs -P` of `pi -p` under Node 24 and under Bun (the faster floor counts). Goal: 8 at 4 ≤ 0.25× the floor.
//  2. Inside a parent of current pi (1.5.2) under Node 24: one delegation of 8 trivial children, 4 at a time,
//     measured from the parent's tool call to its next model request (the scripted server's arrival times), for
//     our extension as `subagents install` leaves it vs pi's example subagent extension. Goal: ≤ 0.35× the
//     example. Also ours installed from an executable with an OLDER pi inside (0.87.1, bench/build-older.ts):
//     the children then run the user's newer pi under Node 24. Goal: ≤ 0.6× the example.
//     npm pi-subagents joins with BENCH_PI_SUBAGENTS=1 (installed once into bench/.cache).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { script } from "../src/scripted/model-server.ts";
import { buildOlder } from "./build-older.ts";
import {
  BIN,
  EXAMPLE_EXT,
  REPO,
  ROUNDS,
  benchWorld,
  measure,
  piCmd,
  ratio,
  stat,
  table,
  type PiWorld,
  type Sample,
} from "./lib.ts";

type Best = { wallMs: number; cpuMs: number };
const best = (xs: Best[]): Best => xs.reduce((a, b) => (b.wallMs < a.wallMs ? b : a));
/** The median round (by wall time), with its CPU. */
const median = (xs: Best[]): Best => [...xs].sort((a, b) => a.wallMs - b.wallMs)[Math.floor(xs.length / 2)];
const ms = (v: number) => `${Math.round(v)} ms`;

/** Wall time from the parent's tool-calling request to its last request (the one that has the children's
 *  results: for a synchronous tool the next one; pi-subagents answers at once and delivers results later). */
function delegationMs(world: PiWorld, from: number, marker: string): number {
  const parent = world.server.requests
    .slice(from)
    .filter((q) => (q.messages ?? []).some((m) => m.role === "user" && JSON.stringify(m.content).includes(marker)));
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
  const r = spawnSync(
    "npm",
    ["install", "--no-save", "--ignore-scripts", "--prefix", dir, `pi-subagents@${PI_SUBAGENTS_VERSION}`],
    { encoding: "utf8", timeout: 300_000 },
  );
  return r.status === 0 && existsSync(entry) ? entry : null;
}
const PI_SUBAGENTS_VERSION = "0.67.0";

export async function fanout(): Promise<string> {
  const world = await benchWorld();
  const { cwd, env } = { cwd: world.workDir, env: world.env };
  const lines: string[] = [];
  try {
    // --- 1. CLI vs the raw floor ---
    for (const [n, c] of [
      [8, 4],
      [16, 16],
    ] as const) {
      const prompts = Array.from({ length: n }, (_, i) => `trivial task ${i}`);
      const samples: Record<string, Sample[]> = { cli: [], node: [], bun: [] };
      for (let r = 0; r < ROUNDS; r++) {
        samples.cli.push(
          await measure([BIN, "delegate", ...prompts, "--concurrency", String(c), "--json"], { env, cwd }),
        );
        for (const rt of ["node", "bun"] as const) {
          const xargs = `printf '%s\\n' ${prompts.map((p) => `'${p}'`).join(" ")} | xargs -P ${c} -I{} sh -c 'echo "{}" | ${piCmd(rt).join(" ")} -p --no-session > /dev/null'`;
          samples[rt].push(await measure(["bash", "-c", xargs], { env, cwd }));
        }
      }
      const cli = median(samples.cli);
      const node = median(samples.node);
      const bun = median(samples.bun);
      const floor = node.wallMs <= bun.wallMs ? node : bun;
      const bestFloor = Math.min(best(samples.node).wallMs, best(samples.bun).wallMs);
      lines.push(
        `### CLI: ${n} trivial tasks, ${c} at a time (median of ${ROUNDS} alternating rounds; best in brackets)`,
        "",
      );
      lines.push(
        table(
          ["runner", "wall", "CPU (whole tree)", "vs fastest floor"],
          [
            [
              "`subagents delegate` (embedded pi children)",
              `${ms(cli.wallMs)} (${ms(best(samples.cli).wallMs)})`,
              ms(cli.cpuMs),
              `${ratio(cli.wallMs, floor.wallMs)} (${ratio(best(samples.cli).wallMs, bestFloor)})`,
            ],
            [
              `floor: \`xargs -P ${c}\` of \`node24 pi -p\``,
              `${ms(node.wallMs)} (${ms(best(samples.node).wallMs)})`,
              ms(node.cpuMs),
              ratio(node.wallMs, floor.wallMs),
            ],
            [
              `floor: \`xargs -P ${c}\` of \`bun pi -p\``,
              `${ms(bun.wallMs)} (${ms(best(samples.bun).wallMs)})`,
              ms(bun.cpuMs),
              ratio(bun.wallMs, floor.wallMs),
            ],
          ],
        ),
        "",
      );
      if (n === 8)
        lines.push(
          `Goal 8 at 4 ≤ 0.25× the fastest floor: ${ratio(cli.wallMs, floor.wallMs)} (median) ${cli.wallMs <= floor.wallMs * 0.25 ? "✓" : "✗"}`,
          "",
        );
    }

    // --- 2. Inside a parent pi (current pi, Node 24) ---
    const older = await buildOlder();
    const olderPi = older.split("-embeds-")[1];
    const install = (bin: string) => {
      const r = spawnSync(bin, ["install"], { env, encoding: "utf8" });
      if (r.status !== 0) throw new Error(`${bin} install failed: ${r.stderr}`);
    };
    const n = 8;
    const psub = process.env.BENCH_PI_SUBAGENTS === "1" ? piSubagents() : null;
    const who = ["ours", "ours-older", "ours-older-node", "example", ...(psub ? ["pi-subagents"] : [])] as const;
    const timings: Record<string, number[]> = Object.fromEntries(who.map((w) => [w, []]));
    const cpu: Record<string, number[]> = Object.fromEntries(who.map((w) => [w, []]));
    const tasks = Array.from({ length: n }, (_, i) => ({ agent: "bench", task: `trivial ${i}` }));
    const ourSteps = [
      { tool: "delegate_to_subagents", args: { tasks: tasks.map((t, i) => ({ name: `t${i}`, prompt: t.task })) } },
      { text: "done" },
    ];
    const stepsFor: Record<string, unknown[]> = {
      ours: ourSteps,
      "ours-older": ourSteps,
      "ours-older-node": ourSteps,
      // pi's example runs 4 at a time (its MAX_CONCURRENCY); ours runs `concurrency` (4 below) at a time.
      example: [{ tool: "subagent", args: { tasks } }, { text: "done" }],
      // pi-subagents fans out through a workflow script; it answers at once and reports when the children end.
      "pi-subagents": [
        {
          tool: "subagent",
          args: {
            workflowScript: `return runs.all(${JSON.stringify(tasks.map((t, i) => ({ key: `t${i}`, ...t })))});`,
          },
        },
        { text: "done" },
        { text: "done" },
      ],
    };
    // Ours is auto-discovered where `subagents install` put it; the others are loaded with -e (and ours kept out
    // with --no-extensions, so each parent carries one subagent tool).
    const argsFor: Record<string, string[]> = {
      ours: [],
      "ours-older": [],
      "ours-older-node": [],
      example: ["--no-extensions", "-e", EXAMPLE_EXT],
      "pi-subagents": ["--no-extensions", "-e", psub ?? ""],
    };
    world.setSubagentSettings({ concurrency: 4 });
    // The first delegation that picks the user's newer pi compiles it in the background (once per version):
    // warm up, untimed, and wait for that compile, as a user's second delegation would find it.
    install(older);
    await measure([...piCmd("node"), "-p", "--no-session"], {
      env: { ...env, PI_OFFLINE: "1" },
      cwd,
      stdin: `warm-up ${script(ourSteps as never)}`,
    });
    const compiledCache = join(world.root, ".cache", "subagents", "compiled-pi");
    for (
      let i = 0;
      i < 600 &&
      !(
        existsSync(compiledCache) && readdirSync(compiledCache).some((d) => existsSync(join(compiledCache, d, "ready")))
      );
      i++
    )
      await Bun.sleep(100);
    for (let r = 0; r < ROUNDS; r++) {
      for (const w of who) {
        if (w === "ours") install(BIN);
        if (w === "ours-older" || w === "ours-older-node") install(older);
        const marker = `bench-${w}-${r}-${Date.now()}`;
        const from = world.server.requests.length;
        // PI_OFFLINE for every parent: offline, pi-subagents' children otherwise stall ~50 s on network look-ups.
        const extra: Record<string, string> = w === "ours-older-node" ? { SUBAGENTS_COMPILE_PI: "0" } : {};
        const s = await measure([...piCmd("node"), "-p", "--no-session", ...argsFor[w]], {
          env: { ...env, PI_OFFLINE: "1", ...extra },
          cwd,
          stdin: `${marker} ${script(stepsFor[w] as never)}`,
        });
        timings[w].push(delegationMs(world, from, marker));
        cpu[w].push(s.cpuMs);
      }
    }
    spawnSync(BIN, ["install", "--uninstall"], { env });
    const med = (w: string) => stat(timings[w]).median;
    const example = med("example");
    const row = (label: string, w: string) => [
      label,
      `${ms(med(w))} (${ms(stat(timings[w]).min)}–${ms(stat(timings[w]).max)})`,
      ms(stat(cpu[w]).median),
      ratio(med(w), example),
    ];
    lines.push(
      `### Inside pi (current pi under Node 24): one delegation of ${n} trivial children, 4 at a time (median of ${ROUNDS} alternating rounds, range in brackets)`,
      "",
    );
    lines.push(
      "From the parent's tool call to its next model request. Ours: the extension as `subagents install` leaves it",
      "(children run the pi inside the installed executable, or the user's pi when that is newer). The example runs",
      "its children as `pi` processes. CPU: the whole parent process tree (parent pi and every child).",
      "",
      table(
        ["extension", "delegation", "CPU (tree)", "vs example"],
        [
          row("subagents (installed; children: embedded pi)", "ours"),
          row(
            `subagents installed from a build with pi ${olderPi} inside (children: the user's newer pi, compiled once)`,
            "ours-older",
          ),
          row(
            `the same with SUBAGENTS_COMPILE_PI=0 (children: the user's pi under Node 24, -e child.js)`,
            "ours-older-node",
          ),
          row("pi's example subagent extension", "example"),
          ...(psub ? [row(`npm pi-subagents ${PI_SUBAGENTS_VERSION}`, "pi-subagents")] : []),
        ],
      ),
      "",
      `Goal ≤ 0.35× the example: ${ratio(med("ours"), example)} ${med("ours") <= example * 0.35 ? "✓" : "✗"}`,
      `Goal with the user's pi newer than the embedded one ≤ 0.6× the example: ${ratio(med("ours-older"), example)} ${med("ours-older") <= example * 0.6 ? "✓" : "✗"}`,
      "",
    );
  } finally {
    await world.close();
  }
  return lines.join("\n");
}

if (import.meta.main) console.log(await fanout());
