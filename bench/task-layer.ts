// What a task's layer costs (docs/composing.md "What an isolated task sees", docs/sandbox-runners.md):
//  1. a real project's test suite — qs 6.14.0 from the registry, `npm test`: eslint over the project, then tape
//     under nyc (test/support/real-projects.ts) — in the user's tree, in an isolated task's layer (one overlay over
//     the repository at its own path), and the way isolated tasks saw it before the layer (a `git worktree add`
//     checkout elsewhere with an overlay mounted on node_modules); wall time and CPU of the whole tree of processes;
//  2. an isolated task's tree made and finished around a trivial command (the layer's cost per task), and the
//     owner's harvest of 1,000 changed files into a branch.
// As root (a mount namespace) and, when root, as an ordinary user made with useradd (a user namespace): the script
// runs itself again as that user. Alternating rounds, medians with min–max.
// Run: bun bench/task-layer.ts [rounds] [parts, e.g. 12]
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWorktreeHost } from "../src/host/git-worktree.ts";
import { overlayWay } from "../src/host/cow-probe.ts";
import { enterArgv } from "../src/core/run/launch/worktree-view.ts";
import { qsProject } from "../test/support/real-projects.ts";
import { asUser, chownTree, ensureTestUser } from "../test/support/test-user.ts";
import { fmt, stat, table } from "./lib.ts";

const ROUNDS = Number(process.argv[2] ?? 5);
const PARTS = process.argv[3] ?? "12";
const INNER = process.env.SUBAGENTS_BENCH_INNER === "1";

type Times = { wall: number[]; cpu: number[] };
const times = (): Times => ({ wall: [], cpu: [] });

/** Runs argv in cwd; its wall time and the CPU of every process it waited for (ms). */
function timed(argv: string[], cwd: string): { wall: number; cpu: number } {
  const t0 = performance.now();
  const r = Bun.spawnSync({
    cmd: argv,
    cwd,
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, NPM_CONFIG_UPDATE_NOTIFIER: "false" },
  });
  const wall = performance.now() - t0;
  if (r.exitCode !== 0) throw new Error(`${argv.join(" ").slice(-200)} failed: ${r.stderr.toString().slice(-800)}`);
  const ru = r.resourceUsage;
  return { wall, cpu: ru ? Number(ru.cpuTime.total) / 1000 : Number.NaN };
}

const add = (t: Times, s: { wall: number; cpu: number }) => {
  t.wall.push(s.wall);
  t.cpu.push(s.cpu);
};

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync("git", ["-c", "safe.directory=*", ...args], { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
};

const TEST = ["npm", "test"];

async function part1(base: string): Promise<string[][]> {
  const repo = qsProject(join(base, "qs"));
  const data = join(base, "data");
  const host = createWorktreeHost(data);
  const way = await overlayWay(join(data, "worktrees"));
  if (typeof way === "string") throw new Error(`no overlay here: ${way}`);
  const plain = times();
  const layer = times();
  const before = times();
  // Warm-up: the page cache holds the project for all three alike.
  timed(TEST, repo);
  for (let i = 0; i < ROUNDS; i++) {
    const order = [0, 1, 2].map((k) => (k + i) % 3);
    for (const k of order) {
      if (k === 0) add(plain, timed(TEST, repo));
      if (k === 1) {
        const wt = await host.create({
          cwd: repo,
          id: `${i}`.padStart(16, "a"),
          name: "bench",
          view: { deps: "auto", local: true },
        });
        add(layer, timed([...wt.view!.enter!, ...TEST], wt.cwd));
        await host.finish(wt);
      }
      if (k === 2) {
        // Before the layer: a checkout elsewhere, node_modules an overlay mount of its own.
        const wt = join(base, `wt-${i}`);
        git(repo, "worktree", "add", "-q", "--detach", wt, "HEAD");
        const [upper, work] = [join(base, `u-${i}`), join(base, `w-${i}`)];
        for (const d of [upper, work, join(wt, "node_modules")]) mkdirSync(d, { recursive: true });
        const enter = enterArgv(way, [
          { kind: "overlay", lower: [join(repo, "node_modules")], upper, work, target: join(wt, "node_modules") },
        ]);
        add(before, timed([...enter, ...TEST], wt));
        git(repo, "worktree", "remove", "--force", "--force", wt);
        spawnSync("chmod", ["-R", "u+rwx", work]);
        rmSync(upper, { recursive: true, force: true });
        rmSync(work, { recursive: true, force: true });
      }
    }
  }
  const ratio = (t: Times, k: "wall" | "cpu") => `${(stat(t[k]).median / stat(plain[k]).median).toFixed(2)}×`;
  const row = (label: string, t: Times) => [
    label,
    fmt(stat(t.wall), " ms"),
    ratio(t, "wall"),
    fmt(stat(t.cpu), " ms"),
    ratio(t, "cpu"),
  ];
  return [
    row("your tree", plain),
    row("isolated: a layer over the repository", layer),
    row("isolated before: worktree + overlay on node_modules", before),
  ];
}

async function part2(base: string): Promise<string[][]> {
  const repo = qsProject(join(base, "qs2"));
  const host = createWorktreeHost(join(base, "data2"));
  const made = times();
  const harvest: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    const wt = await host.create({
      cwd: repo,
      id: `${i}`.padStart(16, "b"),
      name: "trivial",
      view: { deps: "auto", local: true },
    });
    timed([...wt.view!.enter!, "/bin/true"], wt.cwd);
    await host.finish(wt);
    made.wall.push(performance.now() - t0);
    // 1,000 files written by the task (100 folders of 10), harvested into a branch.
    const big = await host.create({
      cwd: repo,
      id: `${i}`.padStart(16, "c"),
      name: "thousand",
      view: { deps: "auto", local: true },
    });
    timed(
      [
        ...big.view!.enter!,
        "/bin/sh",
        "-c",
        'for d in $(seq 100); do mkdir -p "gen/$d"; for f in $(seq 10); do echo "$d $f" > "gen/$d/$f.txt"; done; done',
      ],
      big.cwd,
    );
    const h0 = performance.now();
    const r = await host.finish(big);
    harvest.push(performance.now() - h0);
    if (r.files.length !== 1000) throw new Error(`harvested ${r.files.length} files, not 1000`);
    git(repo, "branch", "-D", "-q", r.branch!);
  }
  return [
    ["a layer made, entered by /bin/true, finished (qs: 66 MB of dependencies)", fmt(stat(made.wall), " ms")],
    ["1,000 changed files harvested into a branch", fmt(stat(harvest), " ms")],
  ];
}

async function inner(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), "subagents-bench-layer-"));
  chmodSync(base, 0o755);
  const out: Record<string, string[][]> = {};
  try {
    if (PARTS.includes("1")) out.part1 = await part1(base);
    if (PARTS.includes("2")) out.part2 = await part2(base);
  } finally {
    spawnSync("chmod", ["-R", "u+rwx", base]);
    rmSync(base, { recursive: true, force: true });
  }
  console.log(JSON.stringify(out));
}

if (INNER) await inner();
else {
  const runs: [string, Record<string, string[][]>][] = [];
  const self = [process.execPath, import.meta.path, String(ROUNDS), PARTS];
  const once = (prefix: string[], env: Record<string, string>) => {
    const r = spawnSync(prefix[0] ?? self[0], [...prefix.slice(1), ...(prefix.length ? self : self.slice(1))], {
      encoding: "utf8",
      env: { ...process.env, ...env, SUBAGENTS_BENCH_INNER: "1" },
      maxBuffer: 64 << 20,
    });
    if (r.status !== 0) throw new Error(r.stderr.slice(-3000));
    return JSON.parse(r.stdout.trim().split("\n").at(-1)!);
  };
  runs.push([process.getuid?.() === 0 ? "root (a mount namespace)" : "this user", once([], {})]);
  const user = process.getuid?.() === 0 ? ensureTestUser() : "not root";
  if (typeof user === "object") {
    const home = mkdtempSync(join(tmpdir(), "subagents-bench-home-"));
    // The user's own cache of the project (npm's and ours), in a home of its own.
    chownTree(home, user);
    runs.push([
      "an ordinary user (a user namespace)",
      once(asUser(user, []), { HOME: home, SUBAGENTS_TEST_CACHE: join(home, "cache") }),
    ]);
    rmSync(home, { recursive: true, force: true });
  }
  for (const [who, r] of runs) {
    console.log(`\n## ${who}\n`);
    if (r.part1) console.log(table(["npm test of qs 6.14.0", "wall", "ratio", "CPU", "ratio"], r.part1));
    if (r.part2) console.log(table(["isolated task's tree", "time"], r.part2));
  }
}
