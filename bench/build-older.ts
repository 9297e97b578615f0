// A `subagents` executable with an older pi inside (default: pi 0.87.1 from its alias package), for measuring
// children when the user's pi is newer than the embedded one: `bun bench/build-older.ts [PI_PACKAGE_DIR]` writes
// bench/.cache/subagents-embeds-<version> (build.ts must have run: it uses dist/child.js and dist/extension.js).
import { readFileSync } from "node:fs";
import { join } from "node:path";

export async function buildOlder(piDir = join("node_modules", "pi-coding-agent-0.87")): Promise<string> {
  process.env.SUBAGENTS_EMBED_PI_DIR = piDir;
  const { compileExecutable, embeddedPiVersion, removeStage, stagePiAssets } = await import("../scripts/executable.ts");
  const outfile = join("bench", ".cache", `subagents-embeds-${embeddedPiVersion()}`);
  const stage = stagePiAssets();
  try {
    await compileExecutable({
      outfile,
      stage,
      childSource: readFileSync("dist/child.js", "utf8"),
      extensionSource: readFileSync("dist/extension.js", "utf8"),
    });
  } finally {
    removeStage();
    delete process.env.SUBAGENTS_EMBED_PI_DIR;
  }
  return outfile;
}

if (import.meta.main) console.log(await buildOlder(process.argv[2]));
