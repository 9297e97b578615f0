// `npm run build`: the child extension bundle, then the compiled CLI carrying that bundle inside it.
//   dist/child.js     the extension every child pi loads with -e (also embedded in the binary)
//   dist/subagents    the standalone executable (bun build --compile)
//   dist/extension.js the pi extension: one self-contained ESM module (loads in Node pi and Bun pi)
import { mkdirSync, readFileSync } from "node:fs";

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

await bundle("src/child/extension.ts", "dist/child.js");
const childSource = readFileSync("dist/child.js", "utf8");
const define = { __SUBAGENTS_CHILD_SOURCE__: JSON.stringify(childSource) };

await bundle("src/pi/extension.ts", "dist/extension.js", define);

const compiled = await Bun.build({
  entrypoints: ["src/cli/main.ts"],
  compile: { outfile: "dist/subagents" },
  define: { ...define, __SUBAGENTS_EXTENSION_SOURCE__: JSON.stringify(readFileSync("dist/extension.js", "utf8")) },
  minify: true,
  sourcemap: "none",
  // Precompiled bytecode: the binary starts without parsing its ~1.5 MB of JS (startup time is a goal).
  bytecode: true,
} as Parameters<typeof Bun.build>[0]);
if (!compiled.success) {
  for (const log of compiled.logs) console.error(log);
  throw new Error("compiling dist/subagents failed");
}
console.log(`built dist/child.js, dist/extension.js, dist/subagents in ${Math.round(performance.now() - started)} ms`);
