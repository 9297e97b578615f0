// The release pipeline for this machine's platform: `scripts/release.ts` (reusing the dist/ that `npm test` just
// built, so the ~140 MB executable is not compiled twice), then install.sh against a local folder and an
// http://127.0.0.1 mirror, and the npm tarballs installed offline. The other platforms' cross-compiles run with
// RELEASE_ALL=1 (they download four Bun runtimes and take minutes).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../../package.json" with { type: "json" };
import { archiveName, hostPlatform, PLATFORMS } from "../../../scripts/platforms.ts";
import { isStub } from "../../../src/embedded/builtin-extension.ts";
import { Database } from "bun:sqlite";
import { runParentPi } from "../../support/parent-pi.ts";
import { piWorld, REPO } from "../../support/pi-env.ts";

const host = hostPlatform()!;
const root = mkdtempSync(join(tmpdir(), "subagents-release-"));
const out = join(root, "release");
const archive = archiveName(pkg.version, host);
const CLEAN_PATH = "/usr/bin:/bin";
let server: ReturnType<typeof Bun.serve>;

/** Runs a command without blocking this process: the 127.0.0.1 mirror below is served from it. */
async function run(cmd: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const proc = Bun.spawn({
    cmd,
    cwd: opts.cwd ?? REPO,
    env: opts.env ?? (process.env as Record<string, string>),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code: await proc.exited, stdout, stderr };
}

beforeAll(async () => {
  const platforms = process.env.RELEASE_ALL ? PLATFORMS.map((p) => p.name).join(",") : host.name;
  const r = await run([
    process.execPath,
    "scripts/release.ts",
    "--platforms",
    platforms,
    "--reuse-build",
    "--fast",
    "--out",
    out,
  ]);
  if (r.code !== 0) throw new Error(`release failed: ${r.stderr}`);
  // The mirror: dist/release over HTTP, and a copy whose archive has one byte changed in transit.
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const { pathname } = new URL(req.url);
      const tampered = pathname.startsWith("/tampered/");
      const file = join(out, pathname.replace(/^\/(tampered|good)\//, ""));
      if (!existsSync(file)) return new Response("not found", { status: 404 });
      const bytes = new Uint8Array(await Bun.file(file).arrayBuffer());
      if (tampered && file.endsWith(".tar.gz")) bytes[bytes.length >> 1] ^= 0xff;
      return new Response(bytes);
    },
  });
}, 300_000);

afterAll(() => {
  server?.stop(true);
  rmSync(root, { recursive: true, force: true });
});

test("release: one archive per platform named with version and platform, and a SHA256SUMS that verifies", async () => {
  const expected = (process.env.RELEASE_ALL ? PLATFORMS : [host]).map((p) => archiveName(pkg.version, p)).sort();
  expect(
    readdirSync(out)
      .filter((f) => f.startsWith("subagents-"))
      .sort(),
  ).toEqual(expected);
  expect(
    readFileSync(join(out, "SHA256SUMS"), "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(/\s+/)[1]),
  ).toEqual(expected);
  const check = await run(["sha256sum", "-c", "SHA256SUMS"], { cwd: out });
  expect(check.code, check.stdout + check.stderr).toBe(0);
  const listing = await run(["tar", "-tvzf", join(out, archive)]);
  const folder = archive.replace(/\.tar\.gz$/, "");
  expect(
    listing.stdout
      .trim()
      .split("\n")
      .map((l) => l.split(/\s+/).at(-1))
      .sort(),
  ).toEqual([`${folder}/`, `${folder}/LICENSE`, `${folder}/README.md`, `${folder}/subagents`]);
  // Nothing of the build machine inside: owner root/root, one fixed time.
  expect(
    new Set(
      listing.stdout
        .trim()
        .split("\n")
        .map((l) => l.split(/\s+/).slice(1, 2).join()),
    ),
  ).toEqual(new Set(["0/0"]));
  expect(
    new Set(
      listing.stdout
        .trim()
        .split("\n")
        .map((l) => l.split(/\s+/).slice(3, 5).join(" ")),
    ).size,
  ).toBe(1);
});

test("release: the archive, unpacked alone in an empty folder with a clean environment, runs demo", async () => {
  const lone = join(root, "lone");
  mkdirSync(join(lone, "home"), { recursive: true });
  expect((await run(["tar", "-xzf", join(out, archive), "-C", lone])).code).toBe(0);
  const dir = join(lone, archive.replace(/\.tar\.gz$/, ""));
  const proc = Bun.spawn({
    cmd: [join(dir, "subagents"), "demo", "--json"],
    cwd: dir,
    env: { HOME: join(lone, "home"), PATH: CLEAN_PATH, TERM: "dumb" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  expect(await proc.exited, stderr).toBe(0);
  expect(JSON.parse(stdout.trim().split("\n").at(-1)!).type).toBe("summary");
}, 90_000);

const installEnv = (home: string) => ({ HOME: home, PATH: CLEAN_PATH });

test("install.sh from a local folder installs into ~/.local/bin and says it is not on PATH", async () => {
  const home = join(root, "home-local");
  mkdirSync(home, { recursive: true });
  const r = await run(["sh", join(REPO, "install.sh"), "--from", out], { env: installEnv(home) });
  expect(r.code, r.stderr).toBe(0);
  const installed = join(home, ".local", "bin", "subagents");
  expect(r.stdout).toContain(`Installed ${installed} (subagents ${pkg.version}`);
  expect(r.stdout).toContain(`${join(home, ".local", "bin")} is not on your PATH`);
  expect((await run([installed, "--version"])).stdout).toContain(`subagents ${pkg.version} · pi `);
}, 60_000);

test("install.sh from an http://127.0.0.1 mirror installs to --prefix; a tampered archive is refused and nothing is installed", async () => {
  const home = join(root, "home-http");
  const prefix = join(root, "prefix-bin");
  mkdirSync(home, { recursive: true });
  const bad = await run(
    ["sh", join(REPO, "install.sh"), "--from", `http://127.0.0.1:${server.port}/tampered`, "--prefix", prefix],
    { env: installEnv(home) },
  );
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain(`checksum mismatch for ${archive}`);
  expect(bad.stderr).toContain("Nothing was installed");
  expect(existsSync(prefix)).toBe(false);

  const good = await run(
    ["sh", join(REPO, "install.sh"), "--from", `http://127.0.0.1:${server.port}/good`, "--prefix", prefix],
    { env: { ...installEnv(home), PATH: `${prefix}:${CLEAN_PATH}` } },
  );
  expect(good.code, good.stderr).toBe(0);
  expect(good.stdout).not.toContain("not on your PATH");
  expect(readdirSync(prefix)).toEqual(["subagents"]);
}, 60_000);

test("npm: the subagents tarball and this platform's tarball install offline; subagents --version runs; the pi manifest points at the extension", async () => {
  const project = join(root, "npm-project");
  mkdirSync(project, { recursive: true });
  const npmDir = join(out, "npm");
  const tarballs = [`subagents-${pkg.version}.tgz`, `subagents-${host.name}-${pkg.version}.tgz`].map((f) =>
    join(npmDir, f),
  );
  // An empty npm cache and --offline: nothing can come from the registry.
  const env = {
    ...process.env,
    npm_config_cache: join(root, "npm-cache"),
    npm_config_update_notifier: "false",
  } as Record<string, string>;
  const r = await run(["npm", "install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", ...tarballs], {
    cwd: project,
    env,
  });
  expect(r.code, r.stderr).toBe(0);
  const v = await run([join(project, "node_modules", ".bin", "subagents"), "--version"], { env });
  expect(v.code, v.stderr).toBe(0);
  expect(v.stdout).toMatch(new RegExp(`^subagents ${pkg.version.replaceAll(".", "\\.")} · pi \\S+ inside · commit `));
  const installed = join(project, "node_modules", "subagents");
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
  expect(manifest.keywords).toContain("pi-package");
  expect(manifest.pi.extensions.map((e: string) => existsSync(join(installed, e)))).toEqual([true]);
  // pi loads the small stub (recognised by the pi inside our executable), which imports the bundle beside it.
  const stub = join(installed, manifest.pi.extensions[0]);
  expect(isStub(stub)).toBe(true);
  const load = (env: Record<string, string>) =>
    run(
      [
        process.execPath,
        "-e",
        `const f = (await import(${JSON.stringify(stub)})).default; const seen = []; await f({ registerTool: (t) => seen.push(t.name), on() {}, registerCommand() {}, registerShortcut() {}, registerFlag() {}, registerMessageRenderer() {}, getFlag() {} }).catch((e) => console.log("err " + e.message)); console.log(JSON.stringify(seen));`,
      ],
      { env: { ...process.env, ...env } as Record<string, string> },
    );
  const deep = await load({ PI_SUBAGENT_CHILD: "1", PI_SUBAGENT_DEPTH: "1", PI_SUBAGENT_MAX_DEPTH: "1" });
  expect(deep.stdout.trim(), deep.stderr).toBe("[]");
  const top = await load({ PI_SUBAGENT_CHILD: "", PI_SUBAGENT_DEPTH: "", PI_SUBAGENT_MAX_DEPTH: "" });
  expect(JSON.parse(top.stdout.trim().split("\n").at(-1)!).length, top.stdout + top.stderr).toBeGreaterThan(0);
  expect(Object.keys(manifest.optionalDependencies).sort()).toEqual(PLATFORMS.map((p) => `subagents-${p.name}`).sort());
}, 120_000);

test("npm: the installed package as pi loads it (`pi install <folder>`, as `pi install npm:subagents` lays it out) starts children from the platform executable", async () => {
  const installed = join(root, "npm-project", "node_modules", "subagents");
  const platformExe = join(root, "npm-project", "node_modules", `subagents-${host.name}`, "bin", "subagents");
  expect(existsSync(platformExe)).toBe(true);
  const world = await piWorld();
  try {
    world.setSubagentSettings({}, { packages: [installed] });
    const prompt = `npm route ${Date.now()}`;
    const r = await runParentPi(world, {
      runtime: "node",
      installed: true,
      steps: [{ tool: "delegate_to_subagents", args: { tasks: [{ name: "one", prompt }] } }, { text: "parent done" }],
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.results[0].text).toMatch(/^✓ one: completed/);
    const db = new Database(world.env.SUBAGENTS_DB, { readonly: true });
    const row = db.query("SELECT pi FROM runs WHERE prompt = ?").get(prompt) as { pi: string };
    db.close();
    expect(row.pi).toContain(`embedded (${platformExe})`);
  } finally {
    await world.close();
  }
}, 120_000);
