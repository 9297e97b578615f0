// Compiling the standalone executable: shared by `bun build.ts` (this machine's dist/subagents) and
// `npm run release` (one executable per platform). Bun fetches the runtime for a foreign target itself
// (from the npm registry, cached under ~/.bun/install/cache) — no extra step needed here.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PHOTON_WASM } from "../src/embedded/photon-wasm.ts";
import { FACTORIES_KEY, LOADER_KEY } from "../src/embedded/builtin-extension.ts";

// The embedded pi: the devDependency (`npm run bump-pi VERSION` moves it). Compiled from its self-contained
// dist/bundle (src/embedded/pi-entry.ts), not from dist/cli.js, which imports pi's internal packages.
// SUBAGENTS_EMBED_PI_DIR embeds another pi package with the same bundle layout (≥ 0.74; the benchmarks build
// one with 0.87.1 inside to measure children on a user's newer pi).
const DEFAULT_PI_DIR = join("node_modules", "@earendil-works", "pi-coding-agent");
export const PI_DIR = process.env.SUBAGENTS_EMBED_PI_DIR || DEFAULT_PI_DIR;
const STAGE_ROOT = join("dist", ".stage");

export function embeddedPiVersion(): string {
  return (JSON.parse(readFileSync(join(PI_DIR, "package.json"), "utf8")) as { version: string }).version;
}

/** The commit this build comes from (shown by --version); "unknown" outside a git checkout. */
export function buildCommit(): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    return dirty ? `${sha}-dirty` : sha;
  } catch {
    return "unknown";
  }
}

/** pi's package-dir assets, laid out the way a compiled pi looks for them (see src/embedded/pi-assets.ts). */
export function stagePiAssets(): string {
  const stage = join(STAGE_ROOT, "pi-assets");
  rmSync(STAGE_ROOT, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  for (const [from, to] of [
    ["package.json", "package.json"],
    ["README.md", "README.md"],
    ["dist/modes/interactive/theme", "theme"],
    ["dist/modes/interactive/assets", "assets"],
    ["dist/core/export-html", "export-html"],
  ]) {
    cpSync(join(PI_DIR, from), join(stage, to), { recursive: true });
  }
  // pi's image library reads its wasm from the build machine's node_modules: without our copy, a child could not
  // look at an image ("[Image omitted: could not be resized…]"). src/embedded/photon-wasm.ts points it here.
  cpSync(createRequire(join(process.cwd(), PI_DIR, "package.json")).resolve("@silvia-odwyer/photon-node/photon_rs_bg.wasm"), join(stage, PHOTON_WASM));
  // Only pi's assets: export-html's compiled .js/.d.ts siblings are code already in the bundle.
  for (const base of ["index", "ansi-to-html", "tool-renderer"]) {
    for (const ext of [".js", ".d.ts", ".js.map", ".d.ts.map"]) rmSync(join(stage, "export-html", base + ext), { force: true });
  }
  return stage;
}

export function removeStage(): void {
  rmSync(STAGE_ROOT, { recursive: true, force: true });
}

/**
 * The two changes the embedded pi gets, made while compiling its bundle. Both fail the build when pi's code no
 * longer has the shape they rely on, so a new pi can never be embedded half-hooked (`npm run bump-pi` shows it).
 * 1. Its extension loader first asks our hook (src/embedded/builtin-extension.ts) whether a file is our own
 *    installed stub, whose extension is built in. pi would otherwise start jiti with its Babel transform and every
 *    module an extension may import just to read a five-line file — in every child of an installed extension.
 * 2. Its CLI runtime's `main(argv)` call gets our child extension as an extension factory (what `-e child.js`
 *    would load through jiti, already compiled to bytecode).
 */
const LOADER_HOOK_AT = /async function loadExtensionModule\((\w+),(\w+)\)\{/;
const MAIN_SHAPE = /async function main\((\w+),(\w+)\)\{[^]{0,400}?\2\?\.extensionFactories/;
const MAIN_CALL = /\bmain\(process\.argv\.slice\(2\)\);?\s*$/;
const BUNDLE_FILE = /pi-coding-agent[^\\/]*[\\/]dist[\\/]bundle[\\/](cli-runtime\.js|chunks[\\/][^\\/]+\.js)$/;
/** The entry's imports of the default pi, sent to PI_DIR when another pi is embedded. */
const DEFAULT_PI_IMPORT = /node_modules\/@earendil-works\/pi-coding-agent\/(dist\/.*)$/;

export type HookReport = { loader: string[]; main: string[]; runtime: string[] };

/** Makes the bundle's changes to one file's source; `found` collects where each was made. */
export function hookPiSource(path: string, source: string, found: HookReport): string {
  if (/cli-runtime\.js$/.test(path)) {
    if (!MAIN_CALL.test(source)) throw new Error(`${path}: no "main(process.argv.slice(2))" call to give our extension to (pi changed its CLI runtime)`);
    found.runtime.push(path);
    return source.replace(MAIN_CALL, `main(process.argv.slice(2),{extensionFactories:globalThis[Symbol.for(${JSON.stringify(FACTORIES_KEY)})]??[]});\n`);
  }
  if (MAIN_SHAPE.test(source)) found.main.push(path);
  const m = LOADER_HOOK_AT.exec(source);
  if (!m) return source;
  found.loader.push(path);
  const hook = `const __subagentsBuiltin=globalThis[Symbol.for(${JSON.stringify(LOADER_KEY)})]?.(${m[1]});if(__subagentsBuiltin)return __subagentsBuiltin;`;
  return source.replace(LOADER_HOOK_AT, (all) => all + hook);
}

/** Throws unless each change was made exactly once (a missed or doubled hook is a pi this build does not know). */
export function checkHooks(found: HookReport): void {
  const problems: string[] = [];
  if (found.runtime.length !== 1) problems.push(`pi's CLI runtime (dist/bundle/cli-runtime.js) was hooked ${found.runtime.length} times`);
  if (found.main.length !== 1) problems.push(`found ${found.main.length} "async function main(args, options)" reading options.extensionFactories (want 1)`);
  if (found.loader.length !== 1) problems.push(`found ${found.loader.length} "async function loadExtensionModule(path, cacheToken)" to hook (want 1)`);
  if (problems.length) throw new Error(`the embedded pi (${PI_DIR}) does not have the shape this build hooks:\n  ${problems.join("\n  ")}`);
}

function piBundleHooks(found: HookReport) {
  return {
    name: "pi-bundle-hooks",
    setup(build: {
      onLoad(o: { filter: RegExp }, f: (a: { path: string }) => { contents: string; loader: "js" }): void;
      onResolve(o: { filter: RegExp }, f: (a: { path: string }) => { path: string }): void;
    }) {
      if (PI_DIR !== DEFAULT_PI_DIR) build.onResolve({ filter: DEFAULT_PI_IMPORT }, ({ path }) => ({ path: join(process.cwd(), PI_DIR, DEFAULT_PI_IMPORT.exec(path)![1]) }));
      build.onLoad({ filter: BUNDLE_FILE }, ({ path }) => ({ contents: hookPiSource(path, readFileSync(path, "utf8"), found), loader: "js" }));
    },
  };
}

export type CompileOptions = {
  outfile: string;
  /** A Bun cross-compile target such as "bun-linux-arm64"; absent: this machine. */
  target?: string;
  stage: string;
  childSource: string;
  extensionSource: string;
};

export async function compileExecutable(o: CompileOptions): Promise<void> {
  const found: HookReport = { loader: [], main: [], runtime: [] };
  const compiled = await Bun.build({
    entrypoints: ["src/cli/main.ts"],
    compile: {
      outfile: o.outfile,
      ...(o.target ? { target: o.target } : {}),
      assets: [o.stage],
      // A user's project .env or bunfig.toml must never change what our executable (or its pi) does.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    define: {
      __SUBAGENTS_CHILD_SOURCE__: JSON.stringify(o.childSource),
      __SUBAGENTS_EXTENSION_SOURCE__: JSON.stringify(o.extensionSource),
      __SUBAGENTS_EMBEDDED_PI__: JSON.stringify(embeddedPiVersion()),
      __SUBAGENTS_COMMIT__: JSON.stringify(buildCommit()),
    },
    minify: true,
    sourcemap: "none",
    format: "esm",
    // Precompiled bytecode: neither our CLI nor pi parses its JS at start (startup time is a goal).
    bytecode: true,
    splitting: true,
    plugins: [piBundleHooks(found)],
  } as Parameters<typeof Bun.build>[0]);
  if (!compiled.success) {
    for (const log of compiled.logs) console.error(log);
    throw new Error(`compiling ${o.outfile} failed`);
  }
  try {
    checkHooks(found);
  } catch (err) {
    rmSync(o.outfile, { force: true }); // no executable with an unhooked pi
    throw err;
  }
}
