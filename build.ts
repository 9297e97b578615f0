// `npm run build`: the child extension bundle, the pi extension, then the compiled executable carrying both and
// current pi itself (its pi role: DESIGN §2).
//   dist/child.js     the extension every system-pi child loads with -e (also embedded in the binary)
//   dist/extension.js the pi extension: one self-contained ESM module (loads in Node pi and Bun pi)
//   dist/subagents    the standalone executable (bun build --compile): CLI + pi + pi's package assets
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const started = performance.now();
const PI_DIR = join("node_modules", "@earendil-works", "pi-coding-agent");
mkdirSync("dist", { recursive: true });

async function bundle(entry: string, outfile: string, define: Record<string, string> = {}): Promise<void> {
  const result = await Bun.build({ entrypoints: [entry], target: "node", format: "esm", define, minify: false });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error(`bundling ${entry} failed`);
  }
  await Bun.write(outfile, await result.outputs[0].text());
}

await bundle("src/child/extension.ts", "dist/child.js");
const childSource = readFileSync("dist/child.js", "utf8");
const define = { __SUBAGENTS_CHILD_SOURCE__: JSON.stringify(childSource) };

await bundle("src/pi/extension.ts", "dist/extension.js", define);

// pi's package-dir assets, laid out the way a compiled pi looks for them (see src/embedded/pi-assets.ts).
const piPackage = JSON.parse(readFileSync(join(PI_DIR, "package.json"), "utf8")) as { version: string };
const stage = join("dist", ".stage", "pi-assets");
rmSync(join("dist", ".stage"), { recursive: true, force: true });
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
// Only pi's assets: export-html's compiled .js/.d.ts siblings are code already in the bundle.
for (const f of ["index.js", "index.d.ts", "index.js.map", "index.d.ts.map", "ansi-to-html.js", "ansi-to-html.d.ts", "ansi-to-html.js.map", "ansi-to-html.d.ts.map", "tool-renderer.js", "tool-renderer.d.ts", "tool-renderer.js.map", "tool-renderer.d.ts.map"]) {
  rmSync(join(stage, "export-html", f), { force: true });
}

const compiled = await Bun.build({
  entrypoints: ["src/cli/main.ts"],
  compile: {
    outfile: "dist/subagents",
    assets: [stage],
    // A user's project .env or bunfig.toml must never change what our executable (or its pi) does.
    autoloadDotenv: false,
    autoloadBunfig: false,
  },
  define: {
    ...define,
    __SUBAGENTS_EXTENSION_SOURCE__: JSON.stringify(readFileSync("dist/extension.js", "utf8")),
    __SUBAGENTS_EMBEDDED_PI__: JSON.stringify(piPackage.version),
  },
  minify: true,
  sourcemap: "none",
  format: "esm",
  // Precompiled bytecode: neither our CLI nor pi parses its JS at start (startup time is a goal).
  bytecode: true,
} as Parameters<typeof Bun.build>[0]);
if (!compiled.success) {
  for (const log of compiled.logs) console.error(log);
  throw new Error("compiling dist/subagents failed");
}
rmSync(join("dist", ".stage"), { recursive: true, force: true });
writeFileSync(join("dist", "embedded-pi.txt"), `${piPackage.version}\n`);
console.log(`built dist/child.js, dist/extension.js, dist/subagents (pi ${piPackage.version} inside) in ${Math.round(performance.now() - started)} ms`);
