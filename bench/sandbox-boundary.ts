// What the layer costs a sandboxed task (docs/sandbox-runners.md "What comes back"), against the sandbox before it
// (the task folder bound writable with its protected paths read-only, and the walk for planted code before and
// after the run): alternating round by round,
//  1. a whole sandboxed child — `subagents run default … --sandbox` with the embedded pi against the scripted model —
//     in a repository of 20,000 tracked files (200 folders × 100), the child changing 10 of them;
//  2. the owner's harvest of 1,000 changed files written back into the user's folder (host level, this checkout).
// Run: bun bench/sandbox-boundary.ts BASE [rounds], where BASE is the older checkout with its own dist/subagents:
//   mkdir /tmp/base && git archive <commit> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/ &&
//   (cd /tmp/base && bun build.ts)
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { script } from "../src/scripted/model-server.ts";
import { createWorktreeHost } from "../src/host/git-worktree.ts";
import { BIN, benchWorld, measure, ratio, stat, table } from "./lib.ts";

const base = process.argv[2];
if (!base) throw new Error("usage: bun bench/sandbox-boundary.ts BASE_CHECKOUT [rounds]");
const rounds = Number(process.argv[3] ?? 5);
const root = mkdtempSync(join(tmpdir(), "boundary-bench-"));

const git = (cwd: string, ...a: string[]) => {
  const r = spawnSync("git", ["-c", "user.email=b@b", "-c", "user.name=b", ...a], { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${a.join(" ")}: ${r.stderr}`);
};

/** 20,000 tracked files in 200 folders. */
function bigRepo(dir: string): string {
  for (let d = 0; d < 200; d++) {
    mkdirSync(join(dir, `d${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) writeFileSync(join(dir, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
  }
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "20,000 files");
  return dir;
}

const world = await benchWorld();
writeFileSync(join(world.agentDir, "auth.json"), JSON.stringify({ fake: { type: "api_key", key: "sk-bench" } }));
const repo = bigRepo(join(root, "big"));
const ten = Array.from({ length: 10 }, (_, i) => `echo changed >> d${i * 20}/f${i}.txt`).join(" && ");
const child = { before: [] as number[], now: [] as number[] };
try {
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 ? (["now", "before"] as const) : (["before", "now"] as const);
    for (const which of order) {
      const bin = which === "before" ? join(base, "dist", "subagents") : BIN;
      const task = `ten ${which} ${i} ${script([{ tool: "bash", args: { command: ten } }, { text: "done" }])}`;
      const s = await measure([bin, "run", "default", task, "--sandbox", "--json"], { env: world.env, cwd: repo });
      if (!s.stdout.includes('"completed"')) throw new Error(`${which} did not complete: ${s.stdout.slice(-400)}`);
      if (!readFileSync(join(repo, "d0", "f0.txt"), "utf8").includes("changed"))
        throw new Error(`${which}: the change did not reach the folder`);
      child[which].push(s.wallMs);
      git(repo, "checkout", "-q", "--", ".");
    }
  }
} finally {
  await world.close();
}

// The harvest alone: 1,000 files written in a layer over a folder, written back by the owner; beside it the floor,
// the same 1,000 files made directly in the folder by one process (what creating them costs on this disk now).
const harvest: number[] = [];
const floor: number[] = [];
const folder = join(root, "thousand");
mkdirSync(folder);
const host = createWorktreeHost(join(root, "data"));
for (let i = 0; i < rounds; i++) {
  const wt = await host.inPlace({ cwd: folder, id: `${i}`.padStart(16, "e"), name: "thousand", local: true });
  const write =
    'for d in $(seq 100); do mkdir -p "gen/$d"; for f in $(seq 10); do echo "$d $f" > "gen/$d/$f.txt"; done; done';
  const argv = [...(wt.view?.enter ?? []), "/bin/sh", "-c", write];
  if (spawnSync(argv[0], argv.slice(1), { cwd: wt.cwd }).status !== 0) throw new Error("could not write the files");
  const t0 = performance.now();
  const r = await host.finish(wt);
  harvest.push(performance.now() - t0);
  if (r.files.length !== 1000) throw new Error(`wrote back ${r.files.length} files, not 1,000`);
  rmSync(join(folder, "gen"), { recursive: true });
  const f0 = performance.now();
  for (let d = 1; d <= 100; d++) {
    mkdirSync(join(folder, "gen", `${d}`), { recursive: true });
    for (let f = 1; f <= 10; f++) writeFileSync(join(folder, "gen", `${d}`, `${f}.txt`), `${d} ${f}\n`);
  }
  floor.push(performance.now() - f0);
  rmSync(join(folder, "gen"), { recursive: true });
}
rmSync(root, { recursive: true, force: true });

const b = stat(child.before);
const a = stat(child.now);
console.log(
  table(
    ["workload", "before (bind + walk)", "now (layer + harvest)", "ratio", "rounds"],
    [
      [
        "sandboxed child, 20,000-file repository, 10 files changed",
        `${b.median.toFixed(0)} ms (min ${b.min.toFixed(0)})`,
        `${a.median.toFixed(0)} ms (min ${a.min.toFixed(0)})`,
        ratio(a.median, b.median),
        String(rounds),
      ],
      [
        "1,000 changed files: harvested and written back (before: the floor, the same files made directly)",
        `${stat(floor).median.toFixed(0)} ms (min ${stat(floor).min.toFixed(0)})`,
        `${stat(harvest).median.toFixed(0)} ms (min ${stat(harvest).min.toFixed(0)})`,
        ratio(stat(harvest).median, stat(floor).median),
        String(rounds),
      ],
    ],
  ),
);
