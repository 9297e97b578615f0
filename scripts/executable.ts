// Compiling the standalone executable: shared by `bun build.ts` (this machine's dist/subagents) and
// `npm run release` (one executable per platform). Bun fetches the runtime for a foreign target itself
// (from the npm registry, cached under ~/.bun/install/cache) — no extra step needed here.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PHOTON_WASM } from "../src/embedded/photon-wasm.ts";
import { LOADER_KEY } from "../src/embedded/builtin-extension.ts";

// Until the embedded pi moves to 1.x (issue 21), it is 0.87.1 from its alias package.
const PI_DIR = join("node_modules", "pi-coding-agent-0.87");
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
 * The one change the embedded pi gets: its extension loader first asks our hook (src/embedded/builtin-extension.ts)
 * whether a file is our own installed stub, whose extension is built in. pi would otherwise load jiti with its
 * Babel transform and every module an extension may import just to read a five-line file — in every child of an
 * installed extension. Fails the build when pi's loader no longer has the function we hook.
 */
const LOADER_HOOK_AT = "async function loadExtensionModule(extensionPath, cacheToken) {";
const piLoaderHook = {
  name: "pi-loader-hook",
  setup(build: { onLoad(o: { filter: RegExp }, f: (a: { path: string }) => { contents: string; loader: "js" }): void }) {
    build.onLoad({ filter: /pi-coding-agent[\\/]dist[\\/]core[\\/]extensions[\\/]loader\.js$/ }, ({ path }) => {
      const source = readFileSync(path, "utf8");
      if (!source.includes(LOADER_HOOK_AT)) throw new Error(`${path}: no "${LOADER_HOOK_AT}" to hook (pi changed its loader)`);
      const hook = `${LOADER_HOOK_AT}\n    const builtin = globalThis[Symbol.for(${JSON.stringify(LOADER_KEY)})]?.(extensionPath);\n    if (builtin) return builtin;`;
      return { contents: source.replace(LOADER_HOOK_AT, hook), loader: "js" };
    });
  },
};

export type CompileOptions = {
  outfile: string;
  /** A Bun cross-compile target such as "bun-linux-arm64"; absent: this machine. */
  target?: string;
  stage: string;
  childSource: string;
  extensionSource: string;
};

export async function compileExecutable(o: CompileOptions): Promise<void> {
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
    plugins: [piLoaderHook],
  } as Parameters<typeof Bun.build>[0]);
  if (!compiled.success) {
    for (const log of compiled.logs) console.error(log);
    throw new Error(`compiling ${o.outfile} failed`);
  }
}
