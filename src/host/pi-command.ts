// Which pi to run for a child, and with which runtime (DESIGN §2). pi starts ~2.5× faster under Bun, so Bun
// is preferred whenever one is at hand: our own process (bun, or the compiled binary acting as bun with
// BUN_BE_BUN=1), else a `bun` on PATH; Node otherwise.
import * as fs from "node:fs";
import * as path from "node:path";

export const PI_PACKAGE = "@mariozechner/pi-coding-agent";

export type PiCommand = { argv: string[]; env: Record<string, string>; describe: string; packageDir?: string };

export class PiNotFoundError extends Error {}

function isPiPackage(dir: string): boolean {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).name === PI_PACKAGE;
  } catch {
    return false;
  }
}

function upFrom(start: string): string | null {
  let dir = path.resolve(start);
  for (;;) {
    const candidate = path.join(dir, "node_modules", PI_PACKAGE);
    if (isPiPackage(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

export function which(name: string, envPath = process.env.PATH ?? ""): string | null {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const full = path.join(dir, name);
    try {
      fs.accessSync(full, fs.constants.X_OK);
      if (fs.statSync(full).isFile()) return full;
    } catch {
      // not here
    }
  }
  return null;
}

function fromPath(envPath?: string): string | null {
  return packageOf(which("pi", envPath) ?? undefined);
}

/** The package a script belongs to (inside a pi parent, process.argv[1] is pi's own cli.js). */
function packageOf(script: string | undefined): string | null {
  if (!script) return null;
  let dir: string;
  try {
    dir = path.dirname(fs.realpathSync(script));
  } catch {
    return null;
  }
  for (let i = 0; i < 4; i++) {
    if (isPiPackage(dir)) return dir;
    dir = path.dirname(dir);
  }
  return null;
}

/** Finds the pi package: the running pi, next to our own code, behind the `pi` on PATH, or above the cwd. */
export function findPiPackage(opts: { moduleDir?: string; cwd: string; envPath?: string; script?: string }): string | null {
  // In the compiled binary import.meta.dir is where it was BUILT (with bytecode): never search from there.
  const local = opts.moduleDir && !opts.moduleDir.startsWith("/$bunfs") && !isCompiledBinary() ? upFrom(opts.moduleDir) : null;
  return packageOf(opts.script) ?? local ?? fromPath(opts.envPath) ?? upFrom(opts.cwd);
}

export function isCompiledBinary(): boolean {
  return typeof Bun !== "undefined" && Bun.main.startsWith("/$bunfs");
}

export function resolvePiCommand(opts: {
  env: Record<string, string | undefined>;
  cwd: string;
  moduleDir?: string;
  /** The script of the running process: inside a pi parent, pi's own entry. */
  script?: string;
  childRuntime: "auto" | "bun" | "node";
}): PiCommand {
  const override = opts.env.SUBAGENTS_PI?.trim();
  if (override) {
    const argv = override.split(/\s+/);
    const exe = argv[0].includes("/") ? argv[0] : which(argv[0], opts.env.PATH);
    if (!exe || !fs.existsSync(exe)) throw new PiNotFoundError(`SUBAGENTS_PI is set to "${override}", but ${argv[0]} cannot be found.`);
    return { argv, env: {}, describe: `SUBAGENTS_PI=${override}` };
  }
  const pkg = findPiPackage({ moduleDir: opts.moduleDir, cwd: opts.cwd, envPath: opts.env.PATH, script: opts.script });
  if (!pkg) {
    throw new PiNotFoundError(
      `Cannot find pi (${PI_PACKAGE}). Install it (npm install -g ${PI_PACKAGE}) or set SUBAGENTS_PI to the command that runs it.`,
    );
  }
  const bunEntry = path.join(pkg, "dist", "bun", "cli.js");
  const nodeEntry = path.join(pkg, "dist", "cli.js");
  const underBun = typeof Bun !== "undefined";
  if (opts.childRuntime !== "node") {
    // --no-install: a child must never download packages (Bun auto-installs imports outside node_modules).
    if (underBun && fs.existsSync(bunEntry)) {
      const env: Record<string, string> = isCompiledBinary() ? { BUN_BE_BUN: "1" } : {};
      return { argv: [process.execPath, "--no-install", bunEntry], env, describe: `bun (${process.execPath})`, packageDir: pkg };
    }
    const bun = which("bun", opts.env.PATH);
    if (bun && fs.existsSync(bunEntry)) return { argv: [bun, "--no-install", bunEntry], env: {}, describe: `bun (${bun})`, packageDir: pkg };
    // Our own compiled binary is a Bun too.
    const ours = which("subagents", opts.env.PATH);
    if (ours && fs.existsSync(bunEntry)) return { argv: [ours, "--no-install", bunEntry], env: { BUN_BE_BUN: "1" }, describe: `bun (${ours})`, packageDir: pkg };
    if (opts.childRuntime === "bun") throw new PiNotFoundError("childRuntime is \"bun\" but no bun executable was found on PATH.");
  }
  const node = !underBun ? process.execPath : which("node", opts.env.PATH);
  if (!node) throw new PiNotFoundError("Cannot find a node executable to run pi with.");
  return { argv: [node, nodeEntry], env: {}, describe: `node (${node})`, packageDir: pkg };
}
