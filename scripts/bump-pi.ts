// `npm run bump-pi VERSION [--no-test]`: moves the pi this project embeds and tests against (the devDependency
// @earendil-works/pi-coding-agent) to another release, as one routine:
//   1. the devDependency is set to VERSION; npm `overrides` stand in for the internal @earendil-works packages its
//      self-contained dist/bundle inlines (the registry here does not serve them): any new one is added;
//   2. npm install, and a check that the installed pi says VERSION;
//   3. bun build.ts — which fails loudly when pi's bundle no longer has the functions the build hooks
//      (scripts/executable.ts) — and a check that dist/subagents says "pi VERSION inside";
//   4. the release left behind becomes the tests' "prior" pi (devDependency pi-coding-agent-prior), the 1.x a user
//      may still run as their own pi;
//   5. the whole suite (skipped with --no-test).
// On a failed install, package.json and package-lock.json are put back as they were.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const PI = "@earendil-works/pi-coding-agent";
const PRIOR = "pi-coding-agent-prior";
const ROOT = join(import.meta.dir, "..");
const PKG = join(ROOT, "package.json");
const LOCK = join(ROOT, "package-lock.json");

type Manifest = { devDependencies: Record<string, string>; overrides?: Record<string, Record<string, string>> };

function fail(message: string): never {
  console.error(`bump-pi: ${message}`);
  process.exit(1);
}

function run(cmd: string, args: string[], opts: { capture?: boolean } = {}): { ok: boolean; out: string } {
  if (!opts.capture) console.log(`$ ${[cmd, ...args].join(" ")}`);
  const r = spawnSync(cmd, args, {
    cwd: ROOT,
    encoding: "utf8",
    stdio: opts.capture ? ["ignore", "pipe", "inherit"] : "inherit",
  });
  return { ok: r.status === 0, out: r.stdout ?? "" };
}

/** The overrides pi's own package needs: each internal @earendil-works dependency (inlined into dist/bundle). */
export function overridesFor(
  deps: Record<string, string>,
  current: Record<string, string>,
  standIn: string,
): Record<string, string> {
  const out = { ...current };
  for (const name of Object.keys(deps)) if (name.startsWith("@earendil-works/") && !out[name]) out[name] = standIn;
  return out;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: { "no-test": { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help || positionals.length !== 1) {
    console.log("usage: npm run bump-pi VERSION [-- --no-test]   (e.g. npm run bump-pi 1.6.0)");
    process.exit(values.help ? 0 : 2);
  }
  const version = positionals[0].replace(/^v/, "");
  if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version)) fail(`"${positionals[0]}" is not a version like 1.6.0`);

  const view = run("npm", ["view", `${PI}@${version}`, "dependencies", "--json"], { capture: true });
  if (!view.ok) fail(`npm has no ${PI}@${version}`);
  const deps = (view.out.trim() ? JSON.parse(view.out) : {}) as Record<string, string>;

  const savedPkg = readFileSync(PKG, "utf8");
  const savedLock = readFileSync(LOCK, "utf8");
  const manifest = JSON.parse(savedPkg) as Manifest;
  const from = manifest.devDependencies[PI];
  manifest.devDependencies[PI] = version;
  if (from && from !== version) manifest.devDependencies[PRIOR] = `npm:${PI}@${from}`;
  const current = manifest.overrides?.[PI] ?? {};
  const standIn = Object.values(current)[0] ?? "npm:yaml@2.9.0";
  const overrides = overridesFor(deps, current, standIn);
  const added = Object.keys(overrides).filter((k) => !(k in current));
  manifest.overrides = { ...manifest.overrides, [PI]: overrides };
  writeFileSync(PKG, `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(
    `pi ${from} → ${version}${added.length ? ` (new overrides: ${added.join(", ")})` : ""}; the tests' prior pi: ${from}`,
  );

  if (!run("npm", ["install"]).ok) {
    writeFileSync(PKG, savedPkg);
    writeFileSync(LOCK, savedLock);
    fail(
      "npm install failed; package.json and package-lock.json are back as they were (run npm install to restore node_modules)",
    );
  }
  const installed = (
    JSON.parse(readFileSync(join(ROOT, "node_modules", PI, "package.json"), "utf8")) as { version: string }
  ).version;
  if (installed !== version) fail(`node_modules has pi ${installed}, not ${version}`);
  const bin = join(ROOT, "node_modules", ".bin", "pi");
  const says = run(
    join(ROOT, "node_modules", ".bin", "node"),
    [join(ROOT, "node_modules", PI, "dist", "bundle", "cli.js"), "--version"],
    { capture: true },
  );
  if (!says.ok || says.out.trim() !== version) fail(`${bin} --version said "${says.out.trim()}", not ${version}`);

  if (!run("bun", ["build.ts"]).ok)
    fail(
      `the build failed with pi ${version} (see above: a hooked function of pi's bundle may have changed; scripts/executable.ts)`,
    );
  const line = run(join(ROOT, "dist", "subagents"), ["--version"], { capture: true }).out.trim();
  if (!line.includes(`pi ${version} inside`)) fail(`dist/subagents --version says "${line}"`);
  console.log(line);

  if (values["no-test"]) {
    console.log("suite skipped (--no-test): run npm test before committing");
    process.exit(0);
  }
  if (!run("bun", ["test", "--timeout", "60000"]).ok)
    fail(
      `the suite fails with pi ${version} (above); the bump is left in place to fix or revert (git checkout package.json package-lock.json && npm install)`,
    );
  console.log(`pi ${version}: installed, embedded, suite passes. Commit package.json and package-lock.json.`);
}
