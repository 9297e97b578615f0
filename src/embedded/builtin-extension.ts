// The pi extension as pi discovers it: a few lines that hand over to the real one. Every pi a sub-agent runs
// discovers the same file as its parent, and pi loads each extension file through jiti, which transpiles it: for
// our 600 KB bundle that cost every child ~0.25 s of CPU (seconds on a busy machine, and ~5 s on a cold jiti
// cache). The pi compiled into our executable has the extension built in (bytecode) and publishes it: its loader
// (patched at build time, scripts/executable.ts) recognises the stub and never starts jiti for it; a pi from npm
// imports the bundle next to the stub; a stub loaded some other way still finds the built-in under BUILTIN_KEY.
import * as fs from "node:fs";

/** Where the pi role publishes the built-in extension factory (a global: the stub runs in jiti's module world). */
export const BUILTIN_KEY = "subagents.extension";
/** The hook the embedded pi's extension loader asks first (see scripts/executable.ts). */
export const LOADER_KEY = "subagents.extension-loader";
/** Where the pi role puts the extension factories the embedded pi's main() starts with (see scripts/executable.ts). */
export const FACTORIES_KEY = "subagents.pi-factories";
/** The stub's first line starts with this; nothing else is recognised as ours. */
export const STUB_MARK = "// subagents stub ";

/** The stub's text. `bundle` is the real extension's path relative to the stub's folder. */
export function stubSource(bundle: string, version: string): string {
  return `${STUB_MARK}${version}: pi loads this file; the extension itself is ${bundle}.
// The pi inside the subagents executable has the extension built in and uses that instead.
export default async function subagents(pi) {
  // A sub-agent that may not delegate further gets nothing from the extension: skip importing it (every child
  // of a pi from npm would otherwise load the whole bundle just to return).
  const env = process.env;
  if (env.PI_SUBAGENT_CHILD === "1" && env.PI_SUBAGENT_MAX_DEPTH && Number(env.PI_SUBAGENT_DEPTH) >= Number(env.PI_SUBAGENT_MAX_DEPTH)) return;
  const builtin = globalThis[Symbol.for(${JSON.stringify(BUILTIN_KEY)})];
  if (typeof builtin === "function") return builtin(pi);
  const mod = await import(new URL(${JSON.stringify(bundle)}, import.meta.url).href);
  return mod.default(pi);
}
`;
}

/** Whether `file` is a stub `stubSource` wrote (its first bytes say so). */
export function isStub(file: string): boolean {
  let fd: number | null = null;
  try {
    fd = fs.openSync(file, "r");
    const buf = Buffer.alloc(STUB_MARK.length);
    return fs.readSync(fd, buf, 0, buf.length, 0) === buf.length && buf.toString("utf8") === STUB_MARK;
  } catch {
    return false;
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
}

/** A sub-agent that may not delegate further (what its parent put in its environment): the extension has
 *  nothing to give it, so neither the stub nor the built-in copy loads it. */
export function childAtMaxDepthEnv(env: Record<string, string | undefined> = process.env): boolean {
  return (
    env.PI_SUBAGENT_CHILD === "1" &&
    !!env.PI_SUBAGENT_MAX_DEPTH &&
    Number(env.PI_SUBAGENT_DEPTH) >= Number(env.PI_SUBAGENT_MAX_DEPTH)
  );
}

/** Publishes `load` as the built-in extension (called by the pi role before pi starts). */
export function publishBuiltin(load: () => Promise<(pi: unknown) => unknown>): void {
  const factory = async (pi: unknown) => (childAtMaxDepthEnv() ? undefined : (await load())(pi));
  const g = globalThis as Record<symbol, unknown>;
  g[Symbol.for(BUILTIN_KEY)] = factory;
  g[Symbol.for(LOADER_KEY)] = (file: string) => (file.endsWith(".js") && isStub(file) ? factory : undefined);
}

/** Publishes the factories the embedded pi's main() is started with (called by the pi role before pi loads). */
export function publishFactories(factories: unknown[]): void {
  (globalThis as Record<symbol, unknown>)[Symbol.for(FACTORIES_KEY)] = factories;
}
