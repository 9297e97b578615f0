// The pi extension as pi discovers it: a few lines that hand over to the real one. Every pi a sub-agent runs
// discovers the same file as its parent, and pi loads each extension file through jiti, which transpiles it: for
// our 600 KB bundle that cost every child ~0.25 s of CPU (seconds on a busy machine, and ~5 s on a cold jiti
// cache). The pi compiled into our executable has the extension built in (bytecode) and publishes it under
// BUILTIN_KEY; the stub uses that when it is there and imports the bundle next to it otherwise (a pi from npm).

/** Where the pi role publishes the built-in extension factory (a global: the stub runs in jiti's module world). */
export const BUILTIN_KEY = "subagents.extension";

/** The stub's text. `bundle` is the real extension's path relative to the stub's folder. */
export function stubSource(bundle: string, version: string): string {
  return `// subagents ${version}: pi loads this file; the extension itself is ${bundle}.
// The pi inside the subagents executable has the extension built in and uses that instead.
export default async function subagents(pi) {
  const builtin = globalThis[Symbol.for(${JSON.stringify(BUILTIN_KEY)})];
  if (typeof builtin === "function") return builtin(pi);
  const mod = await import(new URL(${JSON.stringify(bundle)}, import.meta.url).href);
  return mod.default(pi);
}
`;
}

/** Publishes `load` as the built-in extension (called by the pi role before pi starts). */
export function publishBuiltin(load: () => Promise<(pi: unknown) => unknown>): void {
  (globalThis as Record<symbol, unknown>)[Symbol.for(BUILTIN_KEY)] = async (pi: unknown) => (await load())(pi);
}
