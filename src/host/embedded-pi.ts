// The pi compiled into our executable (docs/settings.md "Which pi runs the children"): how to start it, from the executable itself (CLI), from a
// source checkout (`bun src/cli/main.ts`: the same pi role, pi loaded from node_modules), or — inside a user's pi —
// from the `subagents` binary that `subagents install` recorded.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { EMBEDDED_PI_VERSION } from "./embedded-version.ts";
import { writeFileAtomic } from "./atomic-write.ts";
import { childJitEnv } from "./child-jit.ts";

/** `bun`: the Bun version inside the executable (known to a Node parent only from the install record). */
export type EmbeddedPi = { argv: string[]; env: Record<string, string>; version: string; where: string; bun?: string };

export const ROLE_ENV = "SUBAGENTS_ROLE";
const RECORD = "binary.json";

export function isCompiledBinary(): boolean {
  return typeof Bun !== "undefined" && Bun.main.startsWith("/$bunfs");
}

/** This very process's embedded pi: the compiled executable, or (from source under Bun) our CLI entry. */
export function selfEmbedded(): EmbeddedPi | null {
  if (!EMBEDDED_PI_VERSION || typeof Bun === "undefined") return null;
  const env = { [ROLE_ENV]: "pi", ...childJitEnv() };
  if (isCompiledBinary())
    return { argv: [process.execPath], env, version: EMBEDDED_PI_VERSION, where: process.execPath };
  const entry = path.resolve(import.meta.dir, "..", "cli", "main.ts");
  if (!fs.existsSync(entry)) return null;
  return { argv: [process.execPath, "--no-install", entry], env, version: EMBEDDED_PI_VERSION, where: entry };
}

/** What `subagents install` leaves next to the extension so children started inside pi can use the binary's pi. */
export function writeBinaryRecord(
  runtimeDir: string,
  record: { path: string; version: string; piVersion: string; bunVersion?: string },
): void {
  writeFileAtomic(path.join(runtimeDir, RECORD), `${JSON.stringify(record, null, 2)}\n`);
}

export function removeBinaryRecord(runtimeDir: string): void {
  fs.rmSync(path.join(runtimeDir, RECORD), { force: true });
}

/** The recorded binary's pi, if the binary is still there. */
export function installedEmbedded(runtimeDir: string): EmbeddedPi | null {
  try {
    const r = JSON.parse(fs.readFileSync(path.join(runtimeDir, RECORD), "utf8")) as {
      path?: string;
      piVersion?: string;
      bunVersion?: string;
    };
    if (!r.path || !r.piVersion) return null;
    fs.accessSync(r.path, fs.constants.X_OK);
    return {
      argv: [r.path],
      env: { [ROLE_ENV]: "pi", ...childJitEnv() },
      version: r.piVersion,
      where: r.path,
      ...(r.bunVersion ? { bun: r.bunVersion } : {}),
    };
  } catch {
    return null;
  }
}

const PLATFORM_PACKAGES: Record<string, string> = {
  "linux-x64": "linux-x64",
  "linux-arm64": "linux-arm64",
  "darwin-x64": "darwin-x64",
  "darwin-arm64": "darwin-arm64",
};

/**
 * A `subagents` executable that ships with the extension bundle running this code: `dist/subagents` beside
 * `dist/extension.js` in a checkout (`pi -e dist/extension.js`, `pi install <checkout>`), or the npm package's
 * platform executable, which npm puts beside the `subagents` package (`pi install npm:subagents`: hoisted into the
 * same node_modules) or inside it (`node_modules/subagents-<platform>` of an unpacked package).
 */
export function bundledExecutable(bundleDir: string): string[] | undefined {
  const platform = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  const candidates = [path.join(bundleDir, "subagents")];
  if (platform) {
    const pkg = `subagents-${platform}`;
    candidates.push(
      path.join(bundleDir, "node_modules", pkg, "bin", "subagents"),
      path.join(bundleDir, "..", pkg, "bin", "subagents"),
    );
  }
  for (const file of candidates) {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return [file];
    } catch {
      // not there
    }
  }
  return undefined;
}

const probed = new Map<string, EmbeddedPi | null>();

/**
 * The executable shipped with the bundle (bundledExecutable) as the children's pi: what `subagents install`
 * records, found without it, so every way of loading the extension starts children from the executable. Its pi
 * and Bun versions are asked once per process (`--version`, ~40 ms); one that does not answer is not used.
 */
export function bundledEmbedded(bundleDir: string): EmbeddedPi | null {
  const file = bundledExecutable(bundleDir)?.[0];
  if (!file) return null;
  if (!probed.has(file)) probed.set(file, probe(file));
  return probed.get(file) ?? null;
}

function probe(file: string): EmbeddedPi | null {
  const env: Record<string, string | undefined> = { ...process.env, [ROLE_ENV]: undefined, BUN_BE_BUN: undefined };
  const ask = (extra: Record<string, string>) =>
    spawnSync(file, ["--version"], {
      encoding: "utf8",
      timeout: 5000,
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...env, ...extra },
    }).stdout ?? "";
  const version = / · pi (\d+\.\d+\.\d+\S*) inside/.exec(ask({}))?.[1];
  if (!version) return null;
  const bun = /^(\d+\.\d+\.\d+)/.exec(ask({ BUN_BE_BUN: "1" }).trim())?.[1];
  return {
    argv: [file],
    env: { [ROLE_ENV]: "pi", ...childJitEnv() },
    version,
    where: file,
    ...(bun ? { bun } : {}),
  };
}
