// A throwaway pi world for end-to-end tests: a scripted model server on 127.0.0.1 and a temp
// PI_CODING_AGENT_DIR pointing pi at it. Nothing touches the network or the user's real ~/.pi.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { messageText, piAgentConfig, startModelServer, type ModelServer } from "../../src/scripted/model-server.ts";
import { processesWithEnv } from "../../src/host/proc-marks.ts";
import { withoutTeamNote } from "../../src/core/team.ts";

export type PiWorld = {
  server: ModelServer;
  root: string;
  agentDir: string;
  workDir: string;
  env: Record<string, string>;
  /** Set by close(): helpers whose process ends after it never return (their test already ended). */
  closed: boolean;
  /** Writes <agentDir>/settings.json with a `subagents` section (and optionally other pi settings). */
  setSubagentSettings(s: Record<string, unknown>, pi?: Record<string, unknown>): void;
  close(): Promise<void>;
};

export const REPO = join(import.meta.dir, "..", "..");
export const BUN = process.execPath;

/**
 * The pi releases we test: the one people install today (embedded; `npm run bump-pi` moves it), the 1.x release
 * before it, the last 0.x, and the last one under the old name.
 */
export const PI_PACKAGE_DIRS = {
  current: join(REPO, "node_modules", "@earendil-works", "pi-coding-agent"),
  prior: join(REPO, "node_modules", "pi-coding-agent-prior"),
  previous: join(REPO, "node_modules", "pi-coding-agent-0.87"),
  old: join(REPO, "node_modules", "@mariozechner", "pi-coding-agent"),
} as const;
export type PiRelease = keyof typeof PI_PACKAGE_DIRS;
/** The current pi's version (what the executable embeds; `npm run bump-pi` moves it), as a RegExp source. */
export const CURRENT_PI_VERSION: string = JSON.parse(
  readFileSync(join(PI_PACKAGE_DIRS.current, "package.json"), "utf8"),
).version;
export const CURRENT_PI_RE = CURRENT_PI_VERSION.replace(/\./g, "\\.");
/** Node 24 from the npm registry (devDependency `node`): current pi needs Node ≥ 22.19, CI's machine has Node 20. */
export const NODE24 = join(REPO, "node_modules", "node", "bin", "node");

/** The machine's own node (not the one in node_modules): Node 20 on CI, so old pi is tested where it ran. */
export function systemNode(): string {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir || dir.startsWith(join(REPO, "node_modules"))) continue;
    if (existsSync(join(dir, "node"))) return join(dir, "node");
  }
  return NODE24;
}

/** The command that starts a parent pi of this release under this runtime (the entries pi's own launchers use). */
export function piCmd(release: PiRelease, runtime: "node" | "bun"): string[] {
  const dist = join(PI_PACKAGE_DIRS[release], "dist");
  // pi 1.x runs from its self-contained bundle (its unbundled dist imports internal packages the registry here lacks).
  const onex = release === "current" || release === "prior";
  if (runtime === "bun")
    return [BUN, "--no-install", onex ? join(dist, "bundle", "cli.js") : join(dist, "bun", "cli.js")];
  if (release === "old") return [systemNode(), join(dist, "cli.js")];
  return [NODE24, join(dist, "bundle", "cli.js")];
}

export async function piWorld(): Promise<PiWorld> {
  const server = await startModelServer();
  const root = mkdtempSync(join(tmpdir(), "subagents-e2e-"));
  const agentDir = join(root, "agent");
  const workDir = join(root, "work");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(workDir, { recursive: true });
  const config = piAgentConfig(server.baseUrl);
  writeFileSync(join(agentDir, "models.json"), config["models.json"]);
  const baseSettings = JSON.parse(config["settings.json"]) as Record<string, unknown>;
  const setSubagentSettings = (s: Record<string, unknown>, pi: Record<string, unknown> = {}) =>
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ ...baseSettings, ...pi, subagents: s }, null, 2));
  setSubagentSettings({});
  const env: Record<string, string> = {};
  // CI governs the test harness only (engines.ts MUST_RUN): what runs under test sees the machine as a user's.
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith("PI_SUBAGENT") && k !== "CI") env[k] = v;
  // A `pi` on PATH stands for a user who installed pi (userBin); node_modules/.bin gives them bun and node 24.
  Object.assign(env, {
    PI_CODING_AGENT_DIR: agentDir,
    SUBAGENTS_DB: join(root, "subagents.db"),
    NO_COLOR: "1",
    HOME: root,
    PATH: `${userBin(root)}:${join(REPO, "node_modules", ".bin")}:${process.env.PATH ?? ""}`,
    [WORLD_MARK]: root,
  });
  const world: PiWorld = {
    server,
    root,
    agentDir,
    workDir,
    env,
    closed: false,
    setSubagentSettings,
    close: async () => {
      world.closed = true;
      // A test that timed out may still have its CLI, parent pi or children running: they end with the file's
      // world, so no work of one test file runs on into the next.
      await endMarkedProcesses(root);
      await server.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
  return world;
}

/**
 * The world's `pi` on PATH: the current pi, linked the way npm links a global install. node_modules/.bin/pi alone
 * would not do: three of our devDependencies are pi releases with a `pi` bin, and which one npm links there depends
 * on the order packages were installed in, not on the lock.
 */
function userBin(root: string): string {
  const bin = join(root, "bin");
  mkdirSync(bin, { recursive: true });
  symlinkSync(join(PI_PACKAGE_DIRS.current, "dist", "bundle", "cli.js"), join(bin, "pi"));
  return bin;
}

/** Every process started with a world's env carries this (children and what their bash starts inherit it). */
const WORLD_MARK = "SUBAGENTS_TEST_WORLD";

/** Every live process started with the world's env (the CLI, its children, what their commands started). */
export const markedPids = (root: string): number[] =>
  processesWithEnv(WORLD_MARK)
    .filter((p) => p.value === root)
    .map((p) => p.pid);

/** SIGKILLs every process carrying the world's mark and waits (bounded) until they are gone. */
export async function endMarkedProcesses(root: string): Promise<number[]> {
  if (process.platform !== "linux") return [];
  const found = markedPids(root);
  const deadline = Date.now() + 15_000;
  for (let left = found; left.length && Date.now() < deadline; left = markedPids(root)) {
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await Bun.sleep(50);
  }
  return found;
}

/** Never settles: a helper whose test already ended (its world closed) stops here instead of asserting. */
export const afterClose = <T>(): Promise<T> => new Promise<T>(() => {});

/** Replaces the scripted provider's model list (ids, and prices in USD per million tokens where a test needs spend). */
export function setModels(
  world: PiWorld,
  models: { id: string; cost?: { input: number; output: number; cacheRead?: number } }[],
): void {
  const file = join(world.agentDir, "models.json");
  const config = JSON.parse(readFileSync(file, "utf8"));
  config.providers.fake.models = models.map((m) =>
    m.cost ? { ...m, cost: { cacheRead: 0, ...m.cost, cacheWrite: 0 } } : m,
  );
  writeFileSync(file, JSON.stringify(config));
}

/** Prices the scripted model, so every child turn costs something: caps and totals show it. */
export const priceModel = (world: PiWorld, cost: { input: number; output: number; cacheRead?: number }) =>
  setModels(world, [{ id: "fake-model", cost }]);

/** The tasks of a `--json` run's last line, which is always the summary. */
export function summaryOf(json: Record<string, any>[]): Record<string, any>[] {
  const last = json.at(-1);
  if (last?.type !== "summary")
    throw new Error(`the last JSON line is not the summary: ${JSON.stringify(last)?.slice(0, 200)}`);
  return last.tasks as Record<string, any>[];
}

export type CliResult = { code: number; stdout: string; stderr: string; json: Record<string, any>[] };

/** The `--json` lines of what a command printed (other lines, a human's, left out). */
export const jsonLines = (stdout: string): Record<string, any>[] =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));

/** Runs the CLI from source (`bun src/cli/main.ts`) or the compiled binary. */
export async function cli(
  world: PiWorld,
  args: string[],
  opts: {
    binary?: boolean;
    cwd?: string;
    stdin?: string;
    env?: Record<string, string>;
    /** A command the CLI runs under (another user's ids: test-user.ts). */
    prefix?: string[];
  } = {},
): Promise<CliResult> {
  const cmd = [
    ...(opts.prefix ?? []),
    ...(opts.binary ? [join(REPO, "dist", "subagents"), ...args] : [BUN, join(REPO, "src", "cli", "main.ts"), ...args]),
  ];
  const proc = Bun.spawn({
    cmd,
    cwd: opts.cwd ?? world.workDir,
    env: { ...world.env, ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const code = await proc.exited;
  if (world.closed) return afterClose();
  const json: Record<string, any>[] = [];
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      json.push(JSON.parse(line));
    } catch {
      throw new Error(
        `a --json line is not JSON (exit ${code}): ${line.slice(0, 300)}\nstderr: ${stderr.slice(-1000)}`,
      );
    }
  }
  return { code, stdout, stderr, json };
}

/**
 * Polls `probe` until it returns a truthy value and returns it; past the deadline, fails naming what was awaited
 * and the last value seen. Deadlines are generous: a busy machine is slow, not broken.
 */
export async function until<T>(
  what: string | (() => string),
  probe: () => T | Promise<T>,
  ms = 90_000,
  every = 150,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  let last: T | undefined;
  for (;;) {
    last = await probe();
    if (last) return last as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${ms / 1000} s waiting for ${typeof what === "string" ? what : what()} (last seen: ${JSON.stringify(last)?.slice(0, 500)})`,
      );
    await Bun.sleep(every);
  }
}

/** Why a task (a summary row, a `session --json` record) did not end as expected: for an assertion's message. */
export function taskWhy(task: Record<string, any> | undefined, run?: { stderr?: string }): string {
  if (!task) return `no task; stderr: ${run?.stderr?.slice(-1500) ?? ""}`;
  const parts = [`status ${task.status}`];
  if (task.errorCode || task.error)
    parts.push(`error ${task.errorCode ?? ""}: ${String(task.error ?? "").slice(0, 1500)}`);
  if (Array.isArray(task.warnings) && task.warnings.length)
    parts.push(`warnings: ${task.warnings.join(" | ").slice(0, 800)}`);
  if (run?.stderr?.trim()) parts.push(`stderr: ${run.stderr.slice(-1500)}`);
  return parts.join("\n");
}

/**
 * The model requests of the child whose task starts with `marker`, in order. Matching the whole request would also
 * find its siblings' requests: a call of several tasks names each task's siblings in its prompt (core/team.ts).
 */
export function requestsOfTask(world: PiWorld, marker: string): ModelServer["requests"] {
  return world.server.requests.filter((q) => {
    const first = (q.messages ?? []).find((m) => m.role === "user");
    return !!first && messageText(first).startsWith(marker);
  });
}

/** What the children were told: every user message the scripted model received, each without its team note (the
 *  siblings named after a task are not that task's text). */
export function userTexts(world: PiWorld): string[] {
  return world.server.requests.flatMap((r) =>
    (r.messages ?? []).filter((m) => m.role === "user").map((m) => withoutTeamNote(messageText(m))),
  );
}
