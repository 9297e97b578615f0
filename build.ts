// `npm run build`: the child extension bundle, the pi extension, then the compiled executable carrying both and
// current pi itself (its pi role: DESIGN §2).
//   dist/child.js     the extension every system-pi child loads with -e (also embedded in the binary)
//   dist/extension.js the pi extension: one self-contained ESM module (loads in Node pi and Bun pi)
//   dist/pi-extension.js the stub this checkout's package.json names for `pi install <checkout>` (as in the npm
//                     package): the embedded pi's children use their built-in extension instead of the bundle
//   dist/subagents    the standalone executable (bun build --compile): CLI + pi + pi's package assets
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compileExecutable, embeddedPiVersion, removeStage, stagePiAssets } from "./scripts/executable.ts";
import { stubSource } from "./src/embedded/builtin-extension.ts";
import pkg from "./package.json" with { type: "json" };

const started = performance.now();
mkdirSync("dist", { recursive: true });

async function bundle(entry: string, outfile: string, define: Record<string, string> = {}): Promise<void> {
  const result = await Bun.build({ entrypoints: [entry], target: "node", format: "esm", define, minify: false });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error(`bundling ${entry} failed`);
  }
  await Bun.write(outfile, await result.outputs[0].text());
}

await bundle("src/child-extension/extension.ts", "dist/child.js");
const childSource = readFileSync("dist/child.js", "utf8");
const define = { __SUBAGENTS_CHILD_SOURCE__: JSON.stringify(childSource) };

await bundle("src/pi/extension.ts", "dist/extension.js", define);
writeFileSync(join("dist", "pi-extension.js"), stubSource("./extension.js", pkg.version));

const stage = stagePiAssets();
await compileExecutable({
  outfile: "dist/subagents",
  stage,
  childSource,
  extensionSource: readFileSync("dist/extension.js", "utf8"),
});
removeStage();
const piVersion = embeddedPiVersion();
writeFileSync(join("dist", "embedded-pi.txt"), `${piVersion}\n`);
console.log(
  `built dist/child.js, dist/extension.js, dist/pi-extension.js, dist/subagents (pi ${piVersion} inside) in ${Math.round(performance.now() - started)} ms`,
);
