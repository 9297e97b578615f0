// Which pi runs a child, and under which runtime (docs/settings.md "Which pi runs the children"). The runtime is chosen from what the pi package
// allows (`engines.node`), what is at hand, and measurement: pi ≤ 0.73 starts ~2.5× faster under Bun than under
// Node (0.8 s vs 2.1 s for a trivial `-p` run); pi ≥ 0.74 ships a bundled Node entry with Node's compile cache
// and starts faster under Node 24 than under Bun (0.36 s vs 0.47 s). So current pi prefers a Node its engines
// allow, and old pi prefers Bun; either falls back to the other.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { childJitEnv } from "./child-jit.ts";
import { compiledPiDir, readyCompiledPi, startCompile } from "./compiled-pi.ts";
import { compileState, type CompileState } from "./compiled-pi-state.ts";
import { isCompiledBinary, type EmbeddedPi } from "./embedded-pi.ts";
import {
  compareVersions,
  findPi,
  packageOfScript,
  PI_INSTALL,
  PI_PACKAGES,
  readPiPackage,
  searchPlaces,
  satisfiesNode,
  which,
  type PiPackage,
} from "./pi-discovery.ts";

export type PiInfo = {
  /** pi's version, or "" when SUBAGENTS_PI names a command we cannot look inside. */
  version: string;
  /** Where it came from: the package folder, or `SUBAGENTS_PI=…`. */
  source: string;
  /** "node 24.21.0", "bun 1.4.5", or "" for SUBAGENTS_PI. */
  runtime: string;
};

export type PiCommand = {
  argv: string[];
  env: Record<string, string>;
  /** One line for --verbose, `profiles` and the run record: `pi 0.87.1 · node 24.21.0 · /path/to/package`. */
  describe: string;
  pi: PiInfo;
  /** This pi emits agent_settled (≥ 0.80.4), the reliable end of its automatic work. */
  settles: boolean;
  /** The embedded pi has our child extension built in: no `-e` file. */
  builtinChild?: boolean;
  packageDir?: string;
  /** Set when the user's pi is newer than the embedded one and runs as it is (the slow path): why it is not the
   *  compiled copy. `doctor` and `--version --verbose` say so, with the fix. */
  slowPath?: SlowPath;
};

/** Why children run the user's pi as it is instead of compiled once by us. */
export type SlowPath = {
  version: string;
  embeddedVersion: string;
  dir: string | null;
  state: CompileState | { kind: "disabled" };
};

/** `subagents.childPi`: the embedded pi, the user's (system) pi, or a path to a pi; "auto" lets the front decide. */
export type ChildPiSetting = "auto" | "embedded" | "system" | (string & {});

export class PiNotFoundError extends Error {}

/** First release under the new name: bundled Node entry, compile cache, linear json stream. */
const NODE_FIRST_FROM = "0.74.0";
/** First release with the agent_settled event. */
const SETTLED_FROM = "0.80.4";

type Runtime = { kind: "node" | "bun"; exe: string; version: string; env: Record<string, string> };

const versions = new Map<string, string>();
/** `exe --version` (node prints v24.21.0, bun 1.4.5), once per executable. */
function versionOf(exe: string, env: Record<string, string> = {}): string {
  const cached = versions.get(exe);
  if (cached !== undefined) return cached;
  let version = "";
  try {
    const out = spawnSync(exe, ["--version"], {
      encoding: "utf8",
      timeout: 5000,
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...process.env, ...env },
    });
    version = /^v?(\d+\.\d+\.\d+)/.exec(out.stdout?.trim() ?? "")?.[1] ?? "";
  } catch {
    // not runnable
  }
  versions.set(exe, version);
  return version;
}

/** The node named in an npm launcher's shebang when it is an absolute path (`#!/usr/bin/env node` means PATH's). */
function launcherNode(piScript: string | null): string | null {
  if (!piScript) return null;
  try {
    const fd = fs.openSync(piScript, "r");
    const buf = Buffer.alloc(200);
    const n = fs.readSync(fd, buf, 0, 200, 0);
    fs.closeSync(fd);
    const m = /^#!\s*(\/\S*node)\s*$/m.exec(buf.subarray(0, n).toString("utf8").split("\n")[0]);
    return m ? m[1] : null;
  } catch {
    return null;
  }
}

function nodeCandidates(env: Record<string, string | undefined>): Runtime[] {
  const out: Runtime[] = [];
  const seen = new Set<string>();
  const add = (exe: string | null, version?: string) => {
    if (!exe || seen.has(exe)) return;
    seen.add(exe);
    const v = version ?? versionOf(exe);
    if (v) out.push({ kind: "node", exe, version: v, env: {} });
  };
  // Inside a Node pi, the parent's own node already loads this pi.
  if (typeof Bun === "undefined") add(process.execPath, process.versions.node);
  add(launcherNode(which("pi", env.PATH)));
  add(which("node", env.PATH));
  return out;
}

function bunCandidates(env: Record<string, string | undefined>): Runtime[] {
  const out: Runtime[] = [];
  if (typeof Bun !== "undefined") {
    // The compiled binary acts as the bun CLI with BUN_BE_BUN=1.
    out.push({
      kind: "bun",
      exe: process.execPath,
      version: Bun.version,
      env: isCompiledBinary() ? { BUN_BE_BUN: "1" } : {},
    });
  }
  const bun = which("bun", env.PATH);
  if (bun && bun !== process.execPath) out.push({ kind: "bun", exe: bun, version: versionOf(bun), env: {} });
  const ours = which("subagents", env.PATH);
  if (ours && ours !== process.execPath)
    out.push({ kind: "bun", exe: ours, version: versionOf(ours, { BUN_BE_BUN: "1" }), env: { BUN_BE_BUN: "1" } });
  return out;
}

/** pi 1.x's dist/bun/cli.js imports its internal packages; its self-contained bundle runs under Bun as well. */
const BUNDLE_UNDER_BUN_FROM = "1.0.0";

function entryFor(pkg: PiPackage, kind: "node" | "bun"): string {
  const dist = path.join(pkg.dir, "dist");
  const bun =
    compareVersions(pkg.version, BUNDLE_UNDER_BUN_FROM) >= 0
      ? ["bundle/cli.js", "bun/cli.js", "cli.js"]
      : ["bun/cli.js", "cli.js"];
  const candidates = kind === "bun" ? bun : ["bundle/cli.js", "cli.js"];
  for (const c of candidates) if (fs.existsSync(path.join(dist, c))) return path.join(dist, c);
  return path.join(dist, "cli.js");
}

/** The fastest runtime at hand that can load this pi, or null. */
export function pickRuntime(
  pkg: PiPackage,
  preference: "auto" | "bun" | "node",
  env: Record<string, string | undefined>,
): Runtime | null {
  const node = () => nodeCandidates(env).find((r) => satisfiesNode(r.version, pkg.nodeRange)) ?? null;
  const bun = () => bunCandidates(env)[0] ?? null;
  if (preference === "node") return node();
  if (preference === "bun") return bun();
  return compareVersions(pkg.version, NODE_FIRST_FROM) >= 0 ? (node() ?? bun()) : (bun() ?? node());
}

export function describePi(info: PiInfo): string {
  return [info.version ? `pi ${info.version}` : "pi", info.runtime, info.source].filter(Boolean).join(" · ");
}

function embeddedCommand(e: EmbeddedPi): PiCommand {
  const pi: PiInfo = {
    version: e.version,
    source: `embedded (${e.where})`,
    runtime: `bun ${e.bun ?? (typeof Bun !== "undefined" ? Bun.version : "")}`.trim(),
  };
  return {
    argv: [...e.argv],
    env: { ...e.env },
    describe: describePi(pi),
    pi,
    settles: compareVersions(e.version, SETTLED_FROM) >= 0,
    builtinChild: true,
  };
}

/** A pi named by path: its package folder, a script inside one (npm's `pi` link), or an executable we just run. */
function pathCommand(
  target: string,
  opts: { env: Record<string, string | undefined>; childRuntime: "auto" | "bun" | "node" },
): PiCommand {
  if (!fs.existsSync(target))
    throw new PiNotFoundError(`subagents.childPi is set to "${target}", which does not exist.`);
  const pkg = readPiPackage(target) ?? packageOfScript(target);
  if (pkg) return packageCommand(pkg, opts.childRuntime, opts.env);
  const pi: PiInfo = { version: "", source: target, runtime: "" };
  return { argv: [target], env: {}, describe: describePi(pi), pi, settles: false };
}

function packageCommand(
  pkg: PiPackage,
  childRuntime: "auto" | "bun" | "node",
  env: Record<string, string | undefined>,
): PiCommand {
  const runtime = pickRuntime(pkg, childRuntime, env);
  if (!runtime) {
    const seen = nodeCandidates(env).map((r) => `node ${r.version} (${r.exe})`);
    const need =
      childRuntime === "bun"
        ? 'bun (childRuntime is "bun")'
        : `Node ${pkg.nodeRange ?? "(any)"}${childRuntime === "node" ? "" : " or bun"}`;
    throw new PiNotFoundError(
      `pi ${pkg.version} (${pkg.dir}) needs ${need}, but found ${seen.length ? seen.join(", ") : "no node"}${childRuntime === "node" ? "" : " and no bun"}. ` +
        `Install a newer Node (e.g. npm install -g node@24) or bun, or set SUBAGENTS_PI to the command that runs pi.`,
    );
  }
  const entry = entryFor(pkg, runtime.kind);
  // --no-install: a child must never download packages (Bun auto-installs imports outside node_modules).
  const argv = runtime.kind === "bun" ? [runtime.exe, "--no-install", entry] : [runtime.exe, entry];
  const pi: PiInfo = {
    version: pkg.version,
    source: pkg.dir,
    runtime: `${runtime.kind}${runtime.version ? ` ${runtime.version}` : ""}`,
  };
  return {
    argv,
    env: runtime.env,
    describe: describePi(pi),
    pi,
    settles: compareVersions(pkg.version, SETTLED_FROM) >= 0,
    packageDir: pkg.dir,
  };
}

/**
 * `childPi: auto` with an embedded pi at hand: the newer of it and the user's pi (the running pi inside a pi
 * parent, else the one the user installed), so children never run an older pi than the user's. A tie goes to
 * the embedded pi (it starts ~2× faster); a user's pi that cannot run here (no fitting runtime) does too.
 */
function newestOf(
  embedded: EmbeddedPi,
  user: PiPackage | null,
  opts: { childRuntime: "auto" | "bun" | "node"; env: Record<string, string | undefined>; compile?: boolean },
): PiCommand {
  if (!user || compareVersions(embedded.version, user.version) >= 0) return embeddedCommand(embedded);
  const compiled = compiledUserPi(embedded, user, opts);
  if ("argv" in compiled) return compiled;
  try {
    const cmd = packageCommand(user, opts.childRuntime, opts.env);
    return compiled.slowPath ? { ...cmd, slowPath: compiled.slowPath } : cmd;
  } catch (err) {
    if (err instanceof PiNotFoundError) return embeddedCommand(embedded);
    throw err;
  }
}

/**
 * The user's pi compiled by our executable (src/host/compiled-pi.ts), when ready; else why not, and — for a run
 * (`compile`) — the compile is started in the background (or again, after a failure that may pass). Only a compiled
 * `subagents` can compile (from a source checkout the embedded pi is `bun main.ts`), and SUBAGENTS_COMPILE_PI=0
 * turns it off.
 */
function compiledUserPi(
  embedded: EmbeddedPi,
  user: PiPackage,
  opts: { env: Record<string, string | undefined>; compile?: boolean },
): PiCommand | { slowPath?: SlowPath } {
  if (embedded.argv.length !== 1) return {};
  const binary = embedded.argv[0];
  const dir = compiledPiDir(opts.env, user, binary);
  const slow = (state: SlowPath["state"]): { slowPath: SlowPath } => ({
    slowPath: { version: user.version, embeddedVersion: embedded.version, dir, state },
  });
  if (opts.env.SUBAGENTS_COMPILE_PI === "0") return slow({ kind: "disabled" });
  if (!dir) return {};
  const exe = readyCompiledPi(dir);
  if (!exe) return slow(opts.compile ? startCompile(binary, user, dir, opts.env) : compileState(dir));
  const pi: PiInfo = {
    version: user.version,
    source: `compiled from ${user.dir} (${exe})`,
    runtime: `bun ${embedded.bun ?? (typeof Bun !== "undefined" ? Bun.version : "")}`.trim(),
  };
  return {
    argv: [exe],
    env: childJitEnv(opts.env),
    describe: describePi(pi),
    pi,
    settles: compareVersions(user.version, SETTLED_FROM) >= 0,
    builtinChild: true,
    packageDir: user.dir,
  };
}

export function resolvePiCommand(opts: {
  env: Record<string, string | undefined>;
  cwd: string;
  moduleDir?: string;
  /** The script of the running process: inside a pi parent, pi's own entry. */
  script?: string;
  childRuntime: "auto" | "bun" | "node";
  childPi?: ChildPiSetting;
  /** The embedded pi at hand (the executable's own, or the installed binary's), if any. */
  embedded?: EmbeddedPi | null;
  /** For a run: start compiling the user's newer pi in the background if it is not compiled yet. */
  compile?: boolean;
}): PiCommand {
  const override = opts.env.SUBAGENTS_PI?.trim();
  if (override) {
    const argv = override.split(/\s+/);
    const exe = argv[0].includes("/") ? argv[0] : which(argv[0], opts.env.PATH);
    if (!exe || !fs.existsSync(exe))
      throw new PiNotFoundError(`SUBAGENTS_PI is set to "${override}", but ${argv[0]} cannot be found.`);
    const pi: PiInfo = { version: "", source: `SUBAGENTS_PI=${override}`, runtime: "" };
    return { argv, env: {}, describe: describePi(pi), pi, settles: false };
  }
  const childPi = opts.childPi ?? "auto";
  if (childPi === "embedded") {
    if (!opts.embedded)
      throw new PiNotFoundError(
        'subagents.childPi is "embedded", but no subagents executable with pi inside is at hand (run `subagents install` from the binary).',
      );
    return embeddedCommand(opts.embedded);
  }
  if (childPi !== "auto" && childPi !== "system") return pathCommand(childPi, opts);
  // In the compiled binary import.meta.dir is where it was BUILT: never search from there.
  const moduleDir =
    opts.moduleDir && !opts.moduleDir.startsWith("/$bunfs") && !isCompiledBinary() ? opts.moduleDir : undefined;
  const places = searchPlaces({ env: opts.env, cwd: opts.cwd, script: opts.script, moduleDir, home: opts.env.HOME });
  if (childPi === "auto" && opts.embedded) return newestOf(opts.embedded, findPi(places), opts);
  const pkg = findPi(places);
  if (!pkg) {
    throw new PiNotFoundError(
      `Cannot find pi. Looked for ${PI_PACKAGES.join(" and ")} in: SUBAGENTS_PI (not set), ${places.map((p) => p.label).join(", ")}.\n` +
        `Install it with: ${PI_INSTALL}\n(or set SUBAGENTS_PI to the command that runs pi).`,
    );
  }
  return packageCommand(pkg, opts.childRuntime, opts.env);
}
