// How to start this same program again: the compiled executable, or our CLI entry under Bun from source.
import * as path from "node:path";
import { isCompiledBinary } from "../host/embedded-pi.ts";

export function selfCommand(): string[] {
  if (isCompiledBinary()) return [process.execPath];
  return [process.execPath, "--no-install", path.resolve(import.meta.dir, "main.ts")];
}
