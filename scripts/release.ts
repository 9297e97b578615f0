// `npm run release`: the executable for every platform, packed for download and for npm, into dist/release/:
//   subagents-<version>-<platform>.tar.gz (.zip for Windows)   executable + README.md + LICENSE
//   SHA256SUMS                                                 sha256sum format, what install.sh verifies
//   npm/subagents-<version>.tgz                                the pi package + launcher (optional deps below)
//   npm/subagents-<platform>-<version>.tgz                     one executable each, selected by os/cpu
// Options: --platforms linux-x64,… (default all), --reuse-build (take dist/ as built; the host's executable is
// dist/subagents), --out DIR, --fast (gzip -1: for tests). Archives hold files with a fixed owner and mtime (the commit's time), so two
// runs on one commit differ only where Bun's compiler output does.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { stubSource } from "../src/embedded/builtin-extension.ts";
import { compileExecutable, removeStage, stagePiAssets } from "./executable.ts";
import { archiveName, hostPlatform, PLATFORMS, type Platform } from "./platforms.ts";

const { values } = parseArgs({
  options: {
    platforms: { type: "string" },
    "reuse-build": { type: "boolean" },
    out: { type: "string" },
    fast: { type: "boolean" },
  },
});
const pkg = JSON.parse(readFileSync("package.json", "utf8")) as {
  version: string;
  description: string;
  license: string;
};
const out = resolve(values.out ?? join("dist", "release"));
const work = join(out, ".work");
const wanted = values.platforms ? values.platforms.split(",") : PLATFORMS.map((p) => p.name);
const platforms = wanted.map(
  (name) =>
    PLATFORMS.find((p) => p.name === name) ??
    fail(`unknown platform "${name}" (known: ${PLATFORMS.map((p) => p.name).join(", ")})`),
);

function fail(message: string): never {
  console.error(`release: ${message}`);
  process.exit(2);
}

function sh(cmd: string[], cwd?: string): string {
  const r = spawnSync(cmd[0], cmd.slice(1), { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (r.status !== 0) fail(`${cmd.join(" ")} failed${r.error ? `: ${r.error.message}` : ""}`);
  return r.stdout;
}

/** Seconds since 1970 for every file's mtime: SOURCE_DATE_EPOCH, else the commit's time. */
function fixedTime(): number {
  if (process.env.SOURCE_DATE_EPOCH) return Number(process.env.SOURCE_DATE_EPOCH);
  const r = spawnSync("git", ["log", "-1", "--format=%ct"], { encoding: "utf8" });
  return Number(r.stdout.trim()) || 0;
}

function touchTree(dir: string, t: number): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) touchTree(join(dir, e.name), t);
    utimesSync(join(dir, e.name), t, t);
  }
  utimesSync(dir, t, t);
}

async function executableFor(p: Platform, file: string): Promise<void> {
  if (p === hostPlatform() && (values["reuse-build"] || builtHere)) {
    copyFileSync(join("dist", "subagents"), file);
    return;
  }
  console.log(`compiling ${p.name} (${p.target})`);
  // Bun downloads the target's runtime from the npm registry on first use (cached in ~/.bun/install/cache).
  await compileExecutable({
    outfile: file,
    target: p.target,
    stage: stagePiAssets(),
    childSource: readFileSync("dist/child.js", "utf8"),
    extensionSource: readFileSync("dist/extension.js", "utf8"),
  });
  removeStage();
}

function archive(p: Platform, folder: string, t: number): string {
  const name = archiveName(pkg.version, p);
  touchTree(join(work, folder), t);
  if (p.archive === "zip") {
    // Entries in a fixed order; DOS times in UTC, so the zip does not depend on the build machine's zone.
    const entries = [
      `${folder}/`,
      ...readdirSync(join(work, folder))
        .sort()
        .map((f) => `${folder}/${f}`),
    ];
    sh(["env", "TZ=UTC", "zip", "-X", "-q", join(out, name), ...entries], work);
  } else {
    const tar = join(work, `${folder}.tar`);
    sh(["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", `--mtime=@${t}`, "-cf", tar, folder], work);
    sh(["gzip", "-n", "-f", values.fast ? "-1" : "-9", tar]);
    cpSync(`${tar}.gz`, join(out, name));
  }
  return name;
}

function sha256(file: string): string {
  return new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");
}

/** The esbuild-style npm packages: one per platform holding the executable, and `subagents` itself. */
function npmPackages(built: { p: Platform; exe: string }[], t: number): string[] {
  const dest = join(out, "npm");
  mkdirSync(dest, { recursive: true });
  const base = { version: pkg.version, license: pkg.license, repository: undefined };
  const pack = (dir: string) =>
    sh(["npm", "pack", "--silent", "--pack-destination", dest], dir).trim().split("\n").pop()!;
  const files: string[] = [];
  for (const { p, exe } of built) {
    const dir = join(work, "npm", `subagents-${p.name}`);
    mkdirSync(join(dir, "bin"), { recursive: true });
    copyFileSync(exe, join(dir, "bin", p.exe));
    chmodSync(join(dir, "bin", p.exe), 0o755);
    copyFileSync("LICENSE", join(dir, "LICENSE"));
    writeFileSync(
      join(dir, "README.md"),
      `# subagents-${p.name}\n\nThe \`subagents\` executable for ${p.name}. Install \`subagents\` instead: it picks this package for you.\n`,
    );
    const manifest = {
      name: `subagents-${p.name}`,
      ...base,
      description: `The subagents executable for ${p.name}`,
      os: [p.os],
      cpu: [p.cpu],
      files: ["bin", "README.md", "LICENSE"],
      preferUnplugged: true,
    };
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    touchTree(dir, t);
    files.push(pack(dir));
  }
  const dir = join(work, "npm", "subagents");
  mkdirSync(join(dir, "bin"), { recursive: true });
  copyFileSync(join("scripts", "npm", "launcher.cjs"), join(dir, "bin", "subagents.js"));
  chmodSync(join(dir, "bin", "subagents.js"), 0o755);
  copyFileSync(join("dist", "extension.js"), join(dir, "extension.js"));
  // What pi loads is the stub `subagents install` writes too: the pi inside our executable (children, compiled
  // pis) recognises it and uses its built-in copy, and a child that may not delegate skips the bundle, instead of
  // every pi transpiling the 600 KB bundle through jiti.
  writeFileSync(join(dir, "pi-extension.js"), stubSource("./extension.js", pkg.version));
  for (const f of ["README.md", "LICENSE"]) copyFileSync(f, join(dir, f));
  const manifest = {
    name: "subagents",
    ...base,
    description: pkg.description,
    keywords: ["pi-package", "pi", "subagents"],
    bin: { subagents: "bin/subagents.js" },
    // `pi install npm:subagents` loads this extension (the pi package manifest).
    pi: { extensions: ["./pi-extension.js"] },
    files: ["bin", "pi-extension.js", "extension.js", "README.md", "LICENSE"],
    optionalDependencies: Object.fromEntries(PLATFORMS.map((p) => [`subagents-${p.name}`, pkg.version])),
  };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  touchTree(dir, t);
  files.push(pack(dir));
  return files;
}

let builtHere = false;
if (!values["reuse-build"]) {
  const r = spawnSync(process.execPath, ["build.ts"], { stdio: "inherit" });
  if (r.status !== 0) fail("bun build.ts failed");
  builtHere = true;
}
for (const f of ["dist/subagents", "dist/extension.js", "dist/child.js"])
  if (!existsSync(f)) fail(`${f} is missing: run bun build.ts first`);

rmSync(out, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const t = fixedTime();
const names: string[] = [];
const built: { p: Platform; exe: string }[] = [];
for (const p of platforms) {
  const folder = `subagents-${pkg.version}-${p.name}`;
  mkdirSync(join(work, folder), { recursive: true });
  const exe = join(work, folder, p.exe);
  await executableFor(p, exe);
  chmodSync(exe, 0o755);
  for (const f of ["README.md", "LICENSE"]) copyFileSync(f, join(work, folder, f));
  names.push(archive(p, folder, t));
  built.push({ p, exe });
}
// install.sh next to the archives: `curl -fsSL <release>/install.sh | sh` then fetches from the same place.
copyFileSync("install.sh", join(out, "install.sh"));
writeFileSync(
  join(out, "SHA256SUMS"),
  names
    .sort()
    .map((n) => `${sha256(join(out, n))}  ${n}\n`)
    .join(""),
);
const npm = npmPackages(built, t);
rmSync(work, { recursive: true, force: true });
console.log(
  `release ${pkg.version} in ${out}:\n  ${[...names, "SHA256SUMS", "install.sh", ...npm.map((n) => `npm/${n}`)].join("\n  ")}`,
);
