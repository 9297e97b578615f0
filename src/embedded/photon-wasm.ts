// pi's image library (photon) reads photon_rs_bg.wasm from the folder it was installed in — in the compiled
// executable, a path on the machine that built it. The wasm travels with pi's other assets instead (see
// scripts/executable.ts); every read of it is sent to that copy, so images work wherever the executable runs.
import { createRequire } from "node:module";

export const PHOTON_WASM = "photon_rs_bg.wasm";

type ReadFileSync = (file: unknown, ...rest: unknown[]) => unknown;

const isPhotonWasm = (file: unknown) =>
  (typeof file === "string" && file.endsWith(PHOTON_WASM)) ||
  (file instanceof URL && file.pathname.endsWith(PHOTON_WASM));

/** Sends reads of photon's wasm to `wasm` (the CommonJS fs object: the one photon's loader reads through). */
export function redirectPhotonWasm(wasm: string): void {
  const fs = createRequire(import.meta.url)("node:fs") as { readFileSync: ReadFileSync };
  const original = fs.readFileSync;
  fs.readFileSync = function (this: unknown, file: unknown, ...rest: unknown[]) {
    return original.call(this, isPhotonWasm(file) ? wasm : file, ...rest);
  } as ReadFileSync;
}
