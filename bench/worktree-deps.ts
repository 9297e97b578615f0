// What an isolated task's view of the ignored folders costs (docs/composing.md "What an isolated task sees"):
//  1. a whole trivial isolated task (`subagents run … --isolation worktree`, the embedded pi, one model turn) in a
//     project with 160 MB of dependencies in 10,000 files, against the same project without them — wall time, and
//     the data folder's peak size while it runs — per way: the overlay (root: a mount namespace; an ordinary user,
//     made with useradd when root: a user namespace) and a forced copy;
//  2. making and finishing one isolated worktree of that project per way, the reflink engine's xfs included (root);
//  3. one isolated worktree of a repository with 20,000 tracked files against a bare `git worktree add`;
//  4. entering an overlay view of 100 folders (a monorepo with a node_modules per package), `volatile` or not.
// Alternating rounds, medians with min–max. Run: bun bench/worktree-deps.ts [rounds] [parts, e.g. 124]
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createWorktreeHost } from "../src/host/git-worktree.ts";
import { overlayWay } from "../src/host/cow-probe.ts";
import { enterArgv, type NamespaceWay, type ViewRequest } from "../src/core/run/launch/worktree-view.ts";
import { cli, piWorld, summaryOf, type PiWorld } from "../test/support/pi-env.ts";
import { ensureEngine, REFLINK_MOUNT } from "../test/support/engines.ts";
import { asUser, chownTree, ensureTestUser, type TestUser } from "../test/support/test-user.ts";
import { fmt, stat, table } from "./lib.ts";

const ROUNDS = Number(process.argv[2] ?? 5);

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync("git", ["-c", "safe.directory=*", ...args], { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
};

/** A small project: 50 tracked files; with `deps`, 160 MB in 10,000 files in its ignored node_modules. */
function project(dir: string, deps: boolean): string {
  mkdirSync(join(dir, "src"), { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  for (let i = 0; i < 50; i++) writeFileSync(join(dir, "src", `m${i}.js`), `module.exports = ${i};\n`);
  writeFileSync(join(dir, ".gitignore"), "node_modules/\n");
  git(dir, "add", "-A");
  git(dir, "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q", "-m", "first");
  if (!deps) return dir;
  const chunk = Buffer.alloc(16 * 1024, "x");
  for (let p = 0; p < 500; p++) {
    const d = join(dir, "node_modules", `pkg${p}`, "lib");
    mkdirSync(d, { recursive: true });
    for (let f = 0; f < 20; f++) writeFileSync(join(d, `f${f}.js`), chunk);
  }
  return dir;
}

/** KB under dir, as du counts it (what the disk holds: an overlay's upper layers, a copy's files). */
const signed = (n: number, unit: string, digits = 0) => `${n >= 0 ? "+" : "−"}${Math.abs(n).toFixed(digits)}${unit}`;
const duKB = (dir: string) => Number(spawnSync("du", ["-sk", dir], { encoding: "utf8" }).stdout.split("\t")[0] || 0);

type Variant = { label: string; settings: Record<string, unknown>; user?: TestUser };

async function wholeTask(world: PiWorld, repo: string, v: Variant, watchDisk: boolean) {
  world.setSubagentSettings(v.settings);
  let peak = 0;
  let polling = watchDisk;
  const poller = (async () => {
    while (polling) {
      peak = Math.max(peak, duKB(join(world.root, "worktrees")));
      await Bun.sleep(30);
    }
  })();
  const t = performance.now();
  const r = await cli(world, ["run", "default", "hello", "--isolation", "worktree", "--json"], {
    binary: true,
    cwd: repo,
    prefix: v.user ? asUser(v.user, []) : undefined,
  });
  const ms = performance.now() - t;
  polling = false;
  await poller;
  const [s] = summaryOf(r.json);
  if (s.status !== "completed") throw new Error(`${v.label}: ${s.error}`);
  return { ms, peakKB: peak, mechanism: s.isolation?.view?.mechanism as string };
}

async function part1(): Promise<string> {
  const world = await piWorld();
  const plain = project(join(world.root, "plain"), false);
  const deps = project(join(world.root, "deps"), true);
  const variants: Variant[] = [
    { label: "auto", settings: {} },
    { label: "copy", settings: { worktreeDeps: "copy" } },
  ];
  const user = ensureTestUser();
  if (typeof user === "object") variants.push({ label: "auto, ordinary user", settings: {}, user });
  const rows: string[][] = [];
  for (const v of variants) {
    if (v.user) chownTree(world.root, v.user);
    // Warm: the first run of a world unpacks the embedded pi's files and probes the machine.
    await wholeTask(world, plain, v, false);
    const a: number[] = [];
    const b: number[] = [];
    let mechanism = "";
    for (let i = 0; i < ROUNDS; i++) {
      a.push((await wholeTask(world, plain, v, false)).ms);
      const d = await wholeTask(world, deps, v, false);
      b.push(d.ms);
      mechanism = d.mechanism;
    }
    const diskPlain = (await wholeTask(world, plain, v, true)).peakKB;
    const diskDeps = (await wholeTask(world, deps, v, true)).peakKB;
    const [sa, sb] = [stat(a), stat(b)];
    rows.push([
      `${v.label}: ${mechanism}`,
      fmt(sa, " ms"),
      fmt(sb, " ms"),
      signed(sb.median - sa.median, " ms"),
      `${(diskPlain / 1024).toFixed(1)} MB`,
      `${(diskDeps / 1024).toFixed(1)} MB`,
      signed((diskDeps - diskPlain) / 1024, " MB", 1),
    ]);
    if (v.user) chownTree(world.root, { name: "root", uid: 0, gid: 0 });
  }
  world.setSubagentSettings({});
  await world.close();
  return table(
    ["way", "no deps", "160 MB / 10,000 files", "difference", "disk, no deps", "disk, deps", "disk difference"],
    rows,
  );
}

/** KB in use on the filesystem holding dir (clones share their data: du would count it once per file). */
const usedKB = (dir: string) => {
  const line = spawnSync("df", ["-k", "--output=used", dir], { encoding: "utf8" }).stdout.trim().split("\n").at(-1);
  return Number(line ?? 0);
};

/** Makes and finishes one worktree; its time, and what it held on disk while it existed. */
async function createFinish(data: string, repo: string, view: ViewRequest, id: string) {
  const host = createWorktreeHost(data);
  const before = view.local ? 0 : usedKB(data);
  const t = performance.now();
  const wt = await host.create({ cwd: repo, id, name: "bench", view });
  const ms = performance.now() - t;
  const held = view.local ? duKB(join(data, "worktrees")) : usedKB(data) - before;
  const t2 = performance.now();
  await host.finish(wt);
  return { ms: ms + performance.now() - t2, heldKB: held };
}

async function part2(): Promise<string> {
  const rows: string[][] = [];
  const places: { label: string; base: string; view: ViewRequest }[] = [];
  const ext4 = mkdtempSync("/tmp/subagents-bench-wt-");
  places.push({ label: "overlay (ext4, local child)", base: ext4, view: { deps: "auto", local: true } });
  places.push({ label: "copy (ext4)", base: ext4, view: { deps: "copy", local: true } });
  if (!ensureEngine("reflink")) {
    const xfs = mkdtempSync(join(REFLINK_MOUNT, "bench-"));
    places.push({ label: "reflink (xfs, a container's child)", base: xfs, view: { deps: "auto", local: false } });
  }
  const made = new Map<string, { plain: string; deps: string }>();
  for (const p of places) {
    if (!made.has(p.base))
      made.set(p.base, { plain: project(join(p.base, "plain"), false), deps: project(join(p.base, "deps"), true) });
    const { plain, deps } = made.get(p.base)!;
    const a: number[] = [];
    const b: number[] = [];
    const held: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      a.push((await createFinish(join(p.base, "data"), plain, p.view, `a${String(i).padStart(15, "0")}`)).ms);
      const d = await createFinish(join(p.base, "data"), deps, p.view, `b${String(i).padStart(15, "0")}`);
      b.push(d.ms);
      held.push(d.heldKB);
    }
    const [sa, sb] = [stat(a), stat(b)];
    rows.push([
      p.label,
      fmt(sa, " ms"),
      fmt(sb, " ms"),
      signed(sb.median - sa.median, " ms"),
      `${(stat(held).median / 1024).toFixed(1)} MB`,
    ]);
  }
  for (const base of made.keys()) rmSync(base, { recursive: true, force: true });
  return table(["way", "no deps", "160 MB / 10,000 files", "difference", "disk held (deps)"], rows);
}

async function part3(): Promise<string> {
  const base = mkdtempSync("/tmp/subagents-bench-big-");
  const repo = join(base, "big");
  mkdirSync(repo);
  git(repo, "init", "-q", "-b", "main");
  for (let d = 0; d < 200; d++) {
    mkdirSync(join(repo, `pkg${d}`));
    for (let f = 0; f < 100; f++)
      writeFileSync(join(repo, `pkg${d}`, `f${f}.ts`), `export const v${f} = ${d * 100 + f};\n`);
  }
  git(repo, "add", "-A");
  git(repo, "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q", "-m", "big");
  const tracked = git(repo, "ls-files").split("\n").filter(Boolean).length;
  const bare: number[] = [];
  const ours: number[] = [];
  const addBare = () => {
    const p = join(base, `bare${bare.length}`);
    const t = performance.now();
    git(repo, "worktree", "add", "-q", "--detach", p, "HEAD");
    bare.push(performance.now() - t);
    git(repo, "worktree", "remove", "--force", p);
  };
  for (let i = 0; i < ROUNDS; i++) {
    // Alternating which goes first: the page cache favours the second.
    if (i % 2 === 0) addBare();
    const host = createWorktreeHost(join(base, "data"));
    const t = performance.now();
    const wt = await host.create({
      cwd: repo,
      id: `c${String(i).padStart(15, "0")}`,
      name: "big",
      view: { deps: "auto", local: true },
    });
    ours.push(performance.now() - t);
    await host.finish(wt);
    if (i % 2 === 1) addBare();
  }
  rmSync(base, { recursive: true, force: true });
  const [sb, so] = [stat(bare), stat(ours)];
  return table(
    ["tracked files", "git worktree add", "isolated worktree (snapshot, worktree, view)", "ratio"],
    [[String(tracked), fmt(sb, " ms"), fmt(so, " ms"), `${(so.median / sb.median).toFixed(2)}×`]],
  );
}

async function part4(way: NamespaceWay): Promise<string> {
  const base = mkdtempSync("/tmp/subagents-bench-mounts-");
  const mounts = Array.from({ length: 100 }, (_, i) => {
    const m = {
      kind: "overlay" as const,
      lower: [join(base, `l${i}`)],
      upper: join(base, `u${i}`),
      work: join(base, `w${i}`),
      target: join(base, `t${i}`),
    };
    for (const d of [...m.lower, m.upper, m.work, m.target]) mkdirSync(d);
    writeFileSync(join(m.lower[0], "index.js"), "module.exports = 1;\n");
    return m;
  });
  const times = { volatile: [] as number[], plain: [] as number[] };
  for (let i = 0; i < ROUNDS * 2; i++) {
    const volatile = i % 2 === 0 && way.volatile;
    const argv = [...enterArgv({ ...way, volatile }, mounts), "/bin/true"];
    const t = performance.now();
    const r = spawnSync(argv[0], argv.slice(1), { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`enter: ${r.stderr}`);
    times[volatile ? "volatile" : "plain"].push(performance.now() - t);
  }
  spawnSync("chmod", ["-R", "u+rwx", base]);
  rmSync(base, { recursive: true, force: true });
  const [sp, sv] = [stat(times.plain), stat(times.volatile.length ? times.volatile : [Number.NaN])];
  return table(
    ["folders", "overlays", "overlays, volatile", "ratio"],
    [
      [
        "100",
        fmt(sp, " ms"),
        way.volatile ? fmt(sv, " ms") : "not offered here",
        `${(sv.median / sp.median).toFixed(2)}×`,
      ],
    ],
  );
}

const PARTS = process.argv[3] ?? "1234";
const probeDir = mkdtempSync("/tmp/subagents-bench-probe-");
const way = await overlayWay(join(probeDir, "worktrees"));
rmSync(probeDir, { recursive: true, force: true });
console.log(`overlay here: ${typeof way === "object" ? `yes (${way.userns ? "user" : "mount"} namespace)` : way}`);
if (PARTS.includes("1")) {
  console.log(
    `\n1. A whole trivial isolated task (${ROUNDS} alternating rounds; disk: one run each, peak of the data folder)\n`,
  );
  console.log(await part1());
}
if (PARTS.includes("2")) {
  console.log(`\n2. Make and finish one isolated worktree of that project (${ROUNDS} alternating rounds)\n`);
  console.log(await part2());
}
if (PARTS.includes("3")) {
  console.log(`\n3. One isolated worktree of a large repository (${ROUNDS} alternating rounds)\n`);
  console.log(await part3());
}
if (PARTS.includes("4") && typeof way === "object") {
  console.log(`\n4. Entering an overlay view of 100 folders (${ROUNDS} alternating rounds each)\n`);
  console.log(await part4(way));
}
