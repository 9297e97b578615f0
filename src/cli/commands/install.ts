// `subagents install [--uninstall]`: puts the bundled pi extension where pi auto-discovers it (a stub in
// <agentDir>/extensions/subagents.js, the bundle in <agentDir>/subagents-runtime/extension.js), or removes it. Works from the compiled binary (the bundle is inside it).
import * as fs from "node:fs";
import * as path from "node:path";
import { agentDir as resolveAgentDir } from "../../core/profiles/profile-discovery.ts";
import pkg from "../../../package.json" with { type: "json" };
import { EMBEDDED_PI_VERSION } from "../../host/embedded-version.ts";
import { isCompiledBinary, removeBinaryRecord, writeBinaryRecord } from "../../host/embedded-pi.ts";
import { runtimeDir } from "../../host/child-extension-path.ts";
import { writeFileAtomic } from "../../host/atomic-write.ts";
import { parse } from "../flags/args.ts";
import { INSTALL_FLAGS } from "../flags/command-flags.ts";
import { parseOptions } from "../flags/flag.ts";
import { ConfigError, EXIT, UsageError } from "../errors.ts";
import { INSTALL_HELP } from "../help.ts";
import { extensionSource, installedBundle, installedStub } from "../installed.ts";

/** Where `install --bin` puts the executable (also install.sh's default). */
const defaultBinDir = () => path.join(process.env.HOME ?? "", ".local", "bin");

const onPath = (dir: string) =>
  (process.env.PATH ?? "").split(path.delimiter).some((d) => d && path.resolve(d) === path.resolve(dir));

/** Copies this executable to <dir>/subagents (write then rename: a running copy there keeps working). */
function installBinary(dir: string): void {
  if (!isCompiledBinary())
    throw new ConfigError(
      "install --bin copies the compiled executable: run it from dist/subagents or a release, not from source.",
    );
  const target = path.join(dir, process.platform === "win32" ? "subagents.exe" : "subagents");
  if (path.resolve(target) === path.resolve(process.execPath)) {
    console.log(`${target} is this executable already.`);
  } else {
    try {
      fs.mkdirSync(dir, { recursive: true });
      const tmp = `${target}.${process.pid}.tmp`;
      fs.copyFileSync(process.execPath, tmp);
      fs.chmodSync(tmp, 0o755);
      fs.renameSync(tmp, target);
    } catch (err) {
      throw new ConfigError(`cannot write ${target}: ${(err as Error).message}`);
    }
    console.log(`Installed ${target}.`);
  }
  if (!onPath(dir)) console.log(`${dir} is not on your PATH: add  export PATH="${dir}:$PATH"  to your shell profile.`);
}

export function cmdInstall(argv: string[]): number {
  const { values, positionals } = parse("install", argv, parseOptions(INSTALL_FLAGS));
  if (values.help) {
    console.log(INSTALL_HELP);
    return EXIT.ok;
  }
  if (positionals.length)
    throw new UsageError(`install: unexpected argument "${positionals[0]}". See 'subagents install --help'.`);
  if (values.prefix !== undefined && !values.bin)
    throw new UsageError("install: --prefix goes with --bin. See 'subagents install --help'.");
  if (values.bin) {
    installBinary(path.resolve(values.prefix ?? defaultBinDir()));
    return EXIT.ok;
  }
  const agentDir = resolveAgentDir(process.env, process.env.HOME ?? "");
  const dir = path.join(agentDir, "extensions");
  const target = path.join(dir, "subagents.js");
  const bundle = installedBundle(agentDir);
  if (values.uninstall) {
    if (!fs.existsSync(target)) {
      console.log(`Not installed: ${target} does not exist.`);
      return EXIT.ok;
    }
    fs.rmSync(target);
    fs.rmSync(bundle, { force: true });
    removeBinaryRecord(runtimeDir(agentDir));
    console.log(`Removed ${target}. pi no longer loads the subagents extension.`);
    return EXIT.ok;
  }
  try {
    // The bundle first, then the stub pi discovers (it imports the bundle): never a stub without its bundle.
    writeFileAtomic(bundle, extensionSource());
    writeFileAtomic(target, installedStub(agentDir));
    // Children started inside pi then run this executable's pi (when it is at least as new as the user's pi).
    if (isCompiledBinary())
      writeBinaryRecord(runtimeDir(agentDir), {
        path: process.execPath,
        version: pkg.version,
        piVersion: EMBEDDED_PI_VERSION,
        bunVersion: Bun.version,
      });
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`cannot write ${target}: ${(err as Error).message}`);
  }
  console.log(`Installed ${target}. Start pi and ask it to use delegate_to_subagents or subagent.`);
  if (isCompiledBinary())
    console.log(
      `Sub-agents started inside pi run the pi ${EMBEDDED_PI_VERSION} built into ${process.execPath} (unless your pi is newer).`,
    );
  // Offer the other half: this executable on PATH, when it is not there yet.
  if (isCompiledBinary() && !onPath(path.dirname(process.execPath)))
    console.log(`To run subagents from anywhere: ${process.execPath} install --bin  (copies it to ${defaultBinDir()})`);
  return EXIT.ok;
}
