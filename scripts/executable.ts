// Compiling the standalone executable: shared by `bun build.ts` (this machine's dist/subagents) and
// `npm run release` (one executable per platform). Bun fetches the runtime for a foreign target itself
// (from the npm registry, cached under ~/.bun/install/cache) — no extra step needed here.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PHOTON_WASM } from "../src/embedded/photon-wasm.ts";
import {
  BUNDLE_FILE,
  checkHooks,
  emptyHookReport,
  hookPiSource,
  QUICKJS_WASM,
  type HookReport,
} from "../src/embedded/pi-hooks.ts";

export { checkHooks, hookPiSource, type HookReport };

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
    const sha = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
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
  const fromPi = createRequire(join(process.cwd(), PI_DIR, "package.json"));
  cpSync(fromPi.resolve("@silvia-odwyer/photon-node/photon_rs_bg.wasm"), join(stage, PHOTON_WASM));
  // Codemode's sandbox (pi ≥ 1.x): its QuickJS wasm, found there by the pi role (src/embedded/pi-hooks.ts).
  try {
    cpSync(fromPi.resolve("quickjs-wasi/quickjs.wasm"), join(stage, QUICKJS_WASM));
  } catch {
    // a pi without codemode
  }
  // Only pi's assets: export-html's compiled .js/.d.ts siblings are code already in the bundle.
  for (const base of ["index", "ansi-to-html", "tool-renderer"]) {
    for (const ext of [".js", ".d.ts", ".js.map", ".d.ts.map"])
      rmSync(join(stage, "export-html", base + ext), { force: true });
  }
  return stage;
}

export function removeStage(): void {
  rmSync(STAGE_ROOT, { recursive: true, force: true });
}

/** The entry's imports of the default pi, sent to PI_DIR when another pi is embedded. */
const DEFAULT_PI_IMPORT = /node_modules\/@earendil-works\/pi-coding-agent\/(dist\/.*)$/;

function piBundleHooks(found: HookReport) {
  return {
    name: "pi-bundle-hooks",
    setup(build: {
      onLoad(o: { filter: RegExp }, f: (a: { path: string }) => { contents: string; loader: "js" }): void;
      onResolve(o: { filter: RegExp }, f: (a: { path: string }) => { path: string }): void;
    }) {
      if (PI_DIR !== DEFAULT_PI_DIR)
        build.onResolve({ filter: DEFAULT_PI_IMPORT }, ({ path }) => ({
          path: join(process.cwd(), PI_DIR, DEFAULT_PI_IMPORT.exec(path)![1]),
        }));
      build.onLoad({ filter: BUNDLE_FILE }, ({ path }) => ({
        contents: hookPiSource(path, readFileSync(path, "utf8"), found),
        loader: "js",
      }));
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
  const found = emptyHookReport();
  const compiled = await Bun.build({
    // pi's codemode worker at the path a compiled pi starts it from (see that file).
    entrypoints: [
      "src/cli/main.ts",
      ...(existsSync(join(PI_DIR, "dist", "bundle", "chunks", "codemode-worker.js"))
        ? ["src/extensions/codemode/worker.ts"]
        : []),
    ],
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
    // Entry names relative to the repository: the codemode worker is then "./src/extensions/codemode/worker.ts".
    root: ".",
    plugins: [piBundleHooks(found)],
  } as Parameters<typeof Bun.build>[0]);
  if (!compiled.success) {
    for (const log of compiled.logs) console.error(log);
    throw new Error(`compiling ${o.outfile} failed`);
  }
  try {
    checkHooks(found, PI_DIR);
  } catch (err) {
    rmSync(o.outfile, { force: true }); // no executable with an unhooked pi
    throw err;
  }
}
