// Every documented way of loading the extension into a parent pi (current pi, Node 24), against pi's example
// subagent extension on the same workload: one delegation of 8 trivial children, 4 at a time, measured from the
// parent's tool call to its next model request (the scripted server's arrival times), and to the first child's
// first request (how long the user watches windows that say "starting"). Routes:
//   `subagents install`            the stub pi auto-discovers, the executable recorded beside it
//   `pi -e dist/pi-extension.js`   the checkout's stub, loaded for one run
//   `pi install <checkout>`        the checkout as a pi package (settings `packages`)
//   (and `pi -e` with childPi "system": children on the parent's own pi, as these routes ran before)
//   npm package                    `npm run release`'s tarballs installed offline (the platform package hoisted
//                                  beside `subagents`, as `pi install npm:subagents` lays them out), loaded as a
//                                  package folder
// Goal: each ≤ 0.5× the example. Rounds alternate the contenders (BENCH_ROUNDS, default 3); medians reported.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { script } from "../src/scripted/model-server.ts";
import { hostPlatform } from "../scripts/platforms.ts";
import pkg from "../package.json" with { type: "json" };
import { BIN, EXAMPLE_EXT, REPO, ROUNDS, benchWorld, measure, piCmd, ratio, stat, table, type PiWorld } from "./lib.ts";

/** `goal`: a documented route, held to ≤ 0.5× the example (the others are references). */
type Route = { label: string; args: string[]; setUp(): void; tearDown(): void; steps: unknown[]; goal?: boolean };

const N = 8;
const ms = (v: number) => (Number.isFinite(v) ? `${Math.round(v)} ms` : "n/a");

/** The npm route's folder: the release tarballs for this platform, installed offline into a fresh project. */
function npmInstall(root: string): string {
  const out = join(root, "release");
  const r = spawnSync(
    process.execPath,
    ["scripts/release.ts", "--platforms", hostPlatform()!.name, "--reuse-build", "--fast", "--out", out],
    { cwd: REPO, encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`release failed: ${r.stderr}`);
  const project = join(root, "npm-project");
  mkdirSync(project, { recursive: true });
  const tarballs = readdirSync(join(out, "npm"))
    .filter((f) => f === `subagents-${pkg.version}.tgz` || f === `subagents-${hostPlatform()!.name}-${pkg.version}.tgz`)
    .map((f) => join(out, "npm", f));
  const i = spawnSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", ...tarballs], {
    cwd: project,
    encoding: "utf8",
    env: { ...process.env, npm_config_cache: join(root, "npm-cache"), npm_config_update_notifier: "false" },
  });
  if (i.status !== 0) throw new Error(`npm install failed: ${i.stderr}`);
  return join(project, "node_modules", "subagents");
}

/** From the parent's tool call to its next request, and to the first request of any child after the call. */
function timings(world: PiWorld, from: number, marker: string): { delegation: number; firstChild: number } {
  const reqs = world.server.requests.slice(from);
  const isParent = (q: (typeof reqs)[number]) =>
    (q.messages ?? []).some((m) => m.role === "user" && JSON.stringify(m.content).includes(marker));
  const parent = reqs.filter(isParent);
  const call = parent[0]?.receivedAt;
  const next = parent.at(-1)?.receivedAt;
  const child = reqs.find((q) => !isParent(q) && (q.receivedAt ?? 0) > (call ?? Infinity))?.receivedAt;
  if (call === undefined || next === undefined || parent.length < 2) return { delegation: NaN, firstChild: NaN };
  return { delegation: next - call, firstChild: child === undefined ? NaN : child - call };
}

export async function installRoutes(): Promise<string> {
  const world = await benchWorld();
  const { env, workDir: cwd } = world;
  try {
    const npmFolder = npmInstall(world.root);
    const tasks = Array.from({ length: N }, (_, i) => ({ agent: "bench", task: `trivial ${i}` }));
    const ours = [
      { tool: "delegate_to_subagents", args: { tasks: tasks.map((t, i) => ({ name: `t${i}`, prompt: t.task })) } },
      { text: "done" },
    ];
    const settings = (pi: Record<string, unknown> = {}, ours: Record<string, unknown> = {}) =>
      world.setSubagentSettings({ concurrency: 4, ...ours }, pi);
    const none = () => settings();
    const bin = (args: string[]) => spawnSync(BIN, args, { env, encoding: "utf8" });
    const routes: Route[] = [
      {
        label: "`subagents install`",
        goal: true,
        args: [],
        setUp: () => bin(["install"]),
        tearDown: () => bin(["install", "--uninstall"]),
        steps: ours,
      },
      {
        label: "`pi -e dist/pi-extension.js`",
        goal: true,
        args: ["-e", join(REPO, "dist", "pi-extension.js")],
        setUp: none,
        tearDown: none,
        steps: ours,
      },
      {
        // How the routes other than `subagents install` ran before they found the executable beside the bundle.
        label: "`pi -e dist/pi-extension.js`, childPi system (children: the parent's pi under Node)",
        args: ["-e", join(REPO, "dist", "pi-extension.js")],
        setUp: () => settings({}, { childPi: "system" }),
        tearDown: none,
        steps: ours,
      },
      {
        label: "`pi install <checkout>`",
        goal: true,
        args: [],
        setUp: () => settings({ packages: [REPO] }),
        tearDown: none,
        steps: ours,
      },
      {
        label: "npm package (`pi install <folder>`)",
        goal: true,
        args: [],
        setUp: () => settings({ packages: [npmFolder] }),
        tearDown: none,
        steps: ours,
      },
      {
        label: "pi's example subagent extension",
        args: ["--no-extensions", "-e", EXAMPLE_EXT],
        setUp: none,
        tearDown: none,
        // It runs 4 at a time (its MAX_CONCURRENCY), as ours does here.
        steps: [{ tool: "subagent", args: { tasks } }, { text: "done" }],
      },
    ];
    settings();
    const delegation: number[][] = routes.map(() => []);
    const firstChild: number[][] = routes.map(() => []);
    // One untimed warm-up round: the first start of each pi and executable reads them from disk.
    for (let r = -1; r < ROUNDS; r++) {
      for (const [i, route] of routes.entries()) {
        route.setUp();
        const marker = `routes-${i}-${r}-${Date.now()}`;
        const from = world.server.requests.length;
        await measure([...piCmd("node"), "-p", "--no-session", ...route.args], {
          env: { ...env, PI_OFFLINE: "1" },
          cwd,
          stdin: `${marker} ${script(route.steps as never)}`,
        });
        route.tearDown();
        if (r < 0) continue;
        const t = timings(world, from, marker);
        delegation[i].push(t.delegation);
        firstChild[i].push(t.firstChild);
      }
    }
    const example = stat(delegation.at(-1)!).median;
    const exampleFirst = stat(firstChild.at(-1)!).median;
    const rows = routes.map((route, i) => {
      const d = stat(delegation[i]);
      const f = stat(firstChild[i]);
      const last = i === routes.length - 1;
      const mark = route.goal ? ` ${d.median <= example * 0.5 ? "✓" : "✗"}` : "";
      return [
        route.label,
        `${ms(d.median)} (${ms(d.min)}–${ms(d.max)})`,
        last ? "—" : `${ratio(d.median, example)}${mark}`,
        ms(f.median),
        last ? "—" : ratio(f.median, exampleFirst),
      ];
    });
    return [
      `## Install routes: ${N} trivial children, 4 at a time, inside pi (current pi under Node 24)`,
      "",
      `Median of ${ROUNDS} alternating rounds (range in brackets), after one untimed round. Delegation: from the`,
      "parent's tool call to its next model request. First child: from the tool call to the first child's first request.",
      "",
      table(["loaded by", "delegation", "vs example (goal ≤ 0.5×)", "first child", "vs example"], rows),
      "",
    ].join("\n");
  } finally {
    spawnSync(BIN, ["install", "--uninstall"], { env });
    await world.close();
  }
}

if (import.meta.main) console.log(await installRoutes());
