// Where a user's pi is (docs/settings.md "Which pi runs the children"): under both package names, newest name first, from every place people have
// it. Each place is tried in order and the first pi found wins; when none is, the error lists every place tried.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** Current name first: `@mariozechner/…` ended at 0.73.1 and only still exists on machines that never upgraded. */
export const PI_PACKAGES = ["@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"] as const;
export const PI_INSTALL = `npm install -g ${PI_PACKAGES[0]}`;

export type PiPackage = { dir: string; name: string; version: string; nodeRange?: string };

export function readPiPackage(dir: string): PiPackage | null {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as {
      name?: string;
      version?: string;
      engines?: { node?: string };
    };
    if (!PI_PACKAGES.includes(pkg.name as (typeof PI_PACKAGES)[number])) return null;
    return { dir, name: pkg.name!, version: pkg.version ?? "0.0.0", nodeRange: pkg.engines?.node };
  } catch {
    return null;
  }
}

/** pi under either name inside one node_modules folder. */
function inNodeModules(nodeModules: string): PiPackage | null {
  for (const name of PI_PACKAGES) {
    const found = readPiPackage(path.join(nodeModules, name));
    if (found) return found;
  }
  return null;
}

export function which(name: string, envPath = process.env.PATH ?? ""): string | null {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const full = path.join(dir, name);
    try {
      fs.accessSync(full, fs.constants.X_OK);
      if (fs.statSync(full).isFile()) return full;
    } catch {
      // not here
    }
  }
  return null;
}

/** The pi package a script belongs to: npm's `pi` link resolves to `<pkg>/dist/bundle/cli.js` (0.74+) or `<pkg>/dist/cli.js`. */
export function packageOfScript(script: string | undefined): PiPackage | null {
  if (!script) return null;
  let dir: string;
  try {
    dir = path.dirname(fs.realpathSync(script));
  } catch {
    return null;
  }
  for (let i = 0; i < 4; i++) {
    const found = readPiPackage(dir);
    if (found) return found;
    dir = path.dirname(dir);
  }
  return null;
}

/** The version of the pi this process runs as (a pi extension's host): its entry script's package, else the package
 *  folder a compiled pi was pointed at (PI_PACKAGE_DIR); "" when neither says. */
export function runningPiVersion(): string {
  const dir = process.env.PI_PACKAGE_DIR;
  const pkg = packageOfScript(process.argv[1]) ?? (dir ? readPiPackage(dir) : null);
  return pkg?.version ?? "";
}

/** Global npm folders: npm's configured prefix, the prefix of the node on PATH, and the usual defaults. */
export function globalNodeModules(env: Record<string, string | undefined>, home = os.homedir()): string[] {
  const prefixes: string[] = [];
  if (env.npm_config_prefix) prefixes.push(env.npm_config_prefix);
  if (env.NPM_CONFIG_PREFIX) prefixes.push(env.NPM_CONFIG_PREFIX);
  const node = which("node", env.PATH);
  if (node) {
    try {
      prefixes.push(path.dirname(path.dirname(fs.realpathSync(node))));
    } catch {
      // a dangling link: skip
    }
  }
  prefixes.push(path.join(home, ".npm-global"), path.join(home, ".local"), "/usr/local", "/opt/homebrew", "/usr");
  const dirs = prefixes.map((p) => path.join(p, "lib", "node_modules"));
  if (env.NVM_BIN) dirs.push(path.join(path.dirname(env.NVM_BIN), "lib", "node_modules"));
  return [...new Set(dirs)];
}

export type SearchPlace = { label: string; find: () => PiPackage | null };

/** Every place a user may have pi, in the order they are tried. */
export function searchPlaces(opts: {
  env: Record<string, string | undefined>;
  cwd: string;
  script?: string;
  moduleDir?: string;
  home?: string;
}): SearchPlace[] {
  const places: SearchPlace[] = [
    // Inside a pi parent, argv[1] is that pi's own entry: children run the pi the user is running.
    { label: "the running pi", find: () => packageOfScript(opts.script) },
    { label: "`pi` on PATH", find: () => packageOfScript(which("pi", opts.env.PATH) ?? undefined) },
  ];
  for (const dir of globalNodeModules(opts.env, opts.home)) places.push({ label: dir, find: () => inNodeModules(dir) });
  places.push({ label: `node_modules above ${opts.cwd}`, find: () => upFrom(opts.cwd) });
  if (opts.moduleDir)
    places.push({ label: `node_modules above ${opts.moduleDir}`, find: () => upFrom(opts.moduleDir!) });
  return places;
}

function upFrom(start: string): PiPackage | null {
  let dir = path.resolve(start);
  for (;;) {
    const found = inNodeModules(path.join(dir, "node_modules"));
    if (found) return found;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

export function findPi(places: SearchPlace[]): PiPackage | null {
  for (const place of places) {
    const found = place.find();
    if (found) return found;
  }
  return null;
}

/** Dotted versions compared numerically ("0.87.1" > "0.73.1"); pre-release tags are ignored. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split("-")[0].split(".").map(Number);
  const pb = b.split("-")[0].split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] || 0) - (pb[i] || 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Whether a node version satisfies an `engines.node` range. Only `>=` bounds are read (pi's ranges are plain
 *  minimums); anything else counts as satisfied rather than refusing a working runtime. */
export function satisfiesNode(version: string, range: string | undefined): boolean {
  if (!range) return true;
  const min = /^\s*>=\s*v?(\d+(?:\.\d+){0,2})\s*$/.exec(range);
  if (!min) return true;
  return compareVersions(version.replace(/^v/, ""), min[1]) >= 0;
}
