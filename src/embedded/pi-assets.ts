// pi's package-dir assets (package.json, theme/, export-html/, assets/) for the pi compiled into our executable.
// A compiled pi reads them from PI_PACKAGE_DIR; they travel inside the executable (embedded under PI_ASSETS) and
// are written once per version into the cache folder. The folder is filled under a temporary name and renamed
// into place, so two first runs at once never see (or leave) a half-written copy.
import * as fs from "node:fs";
import * as path from "node:path";
import { cacheBases, cacheRoot } from "../host/private-files.ts";

/** Where build.ts puts the assets inside the executable, relative to the bundle root. */
export const PI_ASSETS = "pi-assets";

/** The cache folder for one build, under each place it may go (private-files.ts: cacheBases), best first; each is
 *  made and checked (ours, owner-only) only when it is tried. */
export function assetCacheDir(env: Record<string, string | undefined>, key: string): (() => string)[] {
  return cacheBases(env).map((b) => () => path.join(cacheRoot(b), key));
}

function copyTree(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(src, dst);
    else fs.writeFileSync(dst, fs.readFileSync(src));
  }
}

/** Whether `dest` has every top-level entry of `source` (a cache written by a build with fewer assets has not). */
function complete(source: string, dest: string): boolean {
  if (!fs.existsSync(path.join(dest, "package.json"))) return false;
  try {
    return fs.readdirSync(source).every((name) => fs.existsSync(path.join(dest, name)));
  } catch {
    return true;
  }
}

/** Copies `source` (a folder, here inside the executable) to `dest` once; returns `dest`. */
export function materialize(source: string, dest: string): string {
  if (complete(source, dest)) return dest;
  const tmp = `${dest}.tmp-${process.pid}-${Math.random().toString(16).slice(2)}`;
  try {
    copyTree(source, tmp);
    // npm's layout too, for a pi from npm started inside a child (it inherits PI_PACKAGE_DIR from our pi).
    for (const [link, target] of [
      ["dist/modes/interactive/theme", "theme"],
      ["dist/modes/interactive/assets", "assets"],
      ["dist/core/export-html", "export-html"],
    ]) {
      const at = path.join(tmp, link);
      fs.mkdirSync(path.dirname(at), { recursive: true });
      try {
        fs.symlinkSync(path.relative(path.dirname(at), path.join(tmp, target)), at);
      } catch {
        // no symlinks here (some Windows setups): only our own pi uses this folder then
      }
    }
    // An incomplete older copy makes way (renaming onto a non-empty folder fails) unless another first run has
    // just put a complete one there.
    if (complete(source, dest)) {
      fs.rmSync(tmp, { recursive: true, force: true });
      return dest;
    }
    if (fs.existsSync(dest)) fs.rmSync(dest, { recursive: true, force: true });
    fs.renameSync(tmp, dest);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    // Another process won the race: its copy is complete (renames are atomic).
    if (complete(source, dest)) return dest;
    throw err;
  }
  return dest;
}
