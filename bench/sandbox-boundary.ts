// What the sandbox's trust boundary adds to a sandboxed child's start (docs/sandbox-runners.md): the socket places
// hidden, the credentials copy (and its watch), the session file bound alone, the walk of the task folder for
// planted code before the run and again after it. Compared with the sandbox as it was, alternating round by round:
//  1. bwrap around /bin/true, in-process: placing the child (sandboxedChild), running it, ending it (cleanup and the
//     after-run report), in a fresh repository and in a copy of this repository's sources (~100 folders, with
//     .pi and .vscode), the network left open ("all") so the proxy's own cost is not counted twice;
//  2. a whole sandboxed child: `subagents run default … --sandbox` with the embedded pi against the scripted model.
// Run: bun bench/sandbox-boundary.ts BASE [rounds], where BASE is the older checkout with its own dist/subagents:
//   mkdir /tmp/base && git archive <commit> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/ &&
//   (cd /tmp/base && bun build.ts)
import { Database } from "bun:sqlite";
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBunHost } from "../src/host/bun.ts";
import { bunDbOpener } from "../src/host/sqlite-bun.ts";
import { defaultSettings } from "../src/core/settings.ts";
import type { PlaceRequest } from "../src/core/run/runners/types.ts";
import { BIN, benchWorld, measure, ratio, REPO, stat, table } from "./lib.ts";

const base = process.argv[2];
if (!base) throw new Error("usage: bun bench/sandbox-boundary.ts BASE_CHECKOUT [rounds]");
const rounds = Number(process.argv[3] ?? 20);
const host = createBunHost(bunDbOpener(Database));
const root = mkdtempSync(join(tmpdir(), "boundary-bench-"));
const agentDir = join(root, "agent");
mkdirSync(join(agentDir, "subagent-sessions", "x"), { recursive: true });
writeFileSync(join(agentDir, "settings.json"), "{}");
writeFileSync(
  join(agentDir, "auth.json"),
  JSON.stringify({ fake: { type: "api_key", key: "sk-bench" }, other: { type: "api_key", key: "sk-other" } }),
);
const git = (cwd: string, ...a: string[]) => Bun.spawnSync({ cmd: ["git", ...a], cwd, stdout: "ignore" });
const small = join(root, "small");
mkdirSync(join(small, ".pi", "agents"), { recursive: true });
git(root, "init", "-q", small);
const sources = join(root, "sources");
for (const d of ["src", "test", "docs", "bench", "scripts"])
  cpSync(join(REPO, d), join(sources, d), { recursive: true });
mkdirSync(join(sources, ".vscode"));
git(root, "init", "-q", sources);

type Module = {
  sandboxedChild(
    req: PlaceRequest,
  ): Promise<
    | { argv: string[]; env: Record<string, string>; cleanup?: () => Promise<void>; guard?: unknown; fd5?: string }
    | string
  >;
};
type Report = { guardWarnings(host: unknown, guard: unknown, messages: unknown[]): string[] };
const now = {
  wrap: (await import("../src/core/run/runners/sandbox-wrap.ts")) as unknown as Module,
  report: (await import("../src/core/run/runners/guard-report.ts")) as unknown as Report,
};
const before = {
  wrap: (await import(join(base, "src/core/run/runners/sandbox-wrap.ts"))) as Module,
  report: (await import(join(base, "src/core/run/runners/guard-report.ts"))) as Report,
};

const req = (cwd: string, n: number): PlaceRequest => ({
  host,
  argv: ["/bin/true"],
  env: { HOME: root, SUBAGENTS_ROLE: "pi" },
  cwd,
  sessionFile: join(agentDir, "subagent-sessions", "x", `a${n}.jsonl`),
  agentDir,
  files: [],
  sandbox: true,
  name: `bench-${n}`,
  settings: { ...defaultSettings(), sandboxNetwork: "all" },
  piAuth: { provider: "fake" },
});

let n = 0;
async function once(m: typeof now, cwd: string): Promise<number> {
  const t = performance.now();
  const placed = await m.wrap.sandboxedChild(req(cwd, n++));
  if (typeof placed === "string") throw new Error(placed);
  // Through the host, as the runner starts it: the child's auth.json on fd 5 where the runner hands it over so.
  const p = host.spawn({ cmd: placed.argv, cwd, env: placed.env, stdin: null, fd3: false, fd5: placed.fd5 });
  const [err, exit] = await Promise.all([new Response(p.stderr as never).text(), p.exited]);
  m.report.guardWarnings(host, placed.guard, []);
  await placed.cleanup?.();
  const ms = performance.now() - t;
  if (exit.code !== 0) throw new Error(`exit ${exit.code}: ${err.slice(0, 300)}`);
  return ms;
}

const start = {
  small: { before: [] as number[], now: [] as number[] },
  sources: { before: [] as number[], now: [] as number[] },
};
for (let i = 0; i < rounds; i++)
  for (const [name, cwd] of [
    ["small", small],
    ["sources", sources],
  ] as const) {
    start[name].before.push(await once(before, cwd));
    start[name].now.push(await once(now, cwd));
  }

const world = await benchWorld();
writeFileSync(join(world.agentDir, "auth.json"), JSON.stringify({ fake: { type: "api_key", key: "sk-bench" } }));
const child = { before: [] as number[], now: [] as number[] };
const childRounds = Math.max(3, Math.ceil(rounds / 3));
try {
  for (let i = 0; i < childRounds; i++) {
    for (const [which, bin] of [
      ["before", join(base, "dist", "subagents")],
      ["now", BIN],
    ] as const) {
      // A store each: the newer build may have migrated its schema, which the older one refuses to write.
      const s = await measure([bin, "run", "default", `hello ${which} ${i}`, "--sandbox", "--json"], {
        env: { ...world.env, SUBAGENTS_DB: join(world.root, `${which}.db`) },
        cwd: world.workDir,
      });
      if (!s.stdout.includes('"completed"')) throw new Error(`${which} did not complete: ${s.stdout.slice(-400)}`);
      child[which].push(s.wallMs);
    }
  }
} finally {
  await world.close();
}

const row = (label: string, v: { before: number[]; now: number[] }, runs: number) => {
  const b = stat(v.before);
  const a = stat(v.now);
  return [
    label,
    `${b.median.toFixed(1)} ms (min ${b.min.toFixed(1)})`,
    `${a.median.toFixed(1)} ms (min ${a.min.toFixed(1)})`,
    `${(a.median - b.median).toFixed(1)} ms`,
    ratio(a.median, b.median),
    String(runs),
  ];
};
console.log(
  table(
    ["start", "before", "now", "difference", "ratio", "runs each"],
    [
      row("bwrap /bin/true, fresh repository", start.small, rounds),
      row("bwrap /bin/true, copy of this repository's sources", start.sources, rounds),
      row("sandboxed child, whole `run`", child, childRounds),
    ],
  ),
);
