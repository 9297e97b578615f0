// The extension `install` writes and `doctor` checks: the bundle this build carries, where it goes, the stub.
import * as fs from "node:fs";
import * as path from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { stubSource } from "../embedded/builtin-extension.ts";
import { runtimeDir } from "../host/child-extension-path.ts";
import { ConfigError } from "./errors.ts";

declare const __SUBAGENTS_EXTENSION_SOURCE__: string | undefined;

/** The pi extension this build carries (what `install` writes; `doctor` compares the installed one with it). */
export function extensionSource(): string {
  if (typeof __SUBAGENTS_EXTENSION_SOURCE__ === "string") return __SUBAGENTS_EXTENSION_SOURCE__;
  const built = path.resolve(import.meta.dir, "../../dist/extension.js");
  if (!fs.existsSync(built)) throw new ConfigError(`${built} does not exist: run npm run build first.`);
  return fs.readFileSync(built, "utf8");
}

/** The full extension bundle `install` writes; the file in pi's extensions folder is a stub that imports it. */
export const installedBundle = (agentDir: string) => path.join(runtimeDir(agentDir), "extension.js");

/** What `install` writes into pi's extensions folder: a stub importing the bundle by its relative path. */
export function installedStub(agentDir: string): string {
  const from = path.join(agentDir, "extensions");
  return stubSource(path.relative(from, installedBundle(agentDir)).split(path.sep).join("/"), pkg.version);
}
