// Finding the user's pi under both package names, and choosing the runtime that can load it, against real
// folders laid out the way npm installs pi (global prefix, `pi` link on PATH, project node_modules).
import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PiNotFoundError, resolvePiCommand } from "../../../src/host/pi-command.ts";
import { compareVersions, satisfiesNode } from "../../../src/host/pi-discovery.ts";

const root = mkdtempSync(join(tmpdir(), "subagents-pi-discovery-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A pi package as npm lays it out (only what discovery reads: package.json and the entries). */
function fakePi(nodeModules: string, name: string, version: string, nodeRange: string): string {
  const dir = join(nodeModules, ...name.split("/"));
  for (const d of ["dist/bundle", "dist/bun"]) mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version, engines: { node: nodeRange } }));
  for (const f of ["dist/cli.js", "dist/bundle/cli.js", "dist/bun/cli.js"])
    writeFileSync(join(dir, f), "#!/usr/bin/env node\n");
  return dir;
}

/** A `node` executable that reports a version (a real process, as the real check spawns). */
function fakeNode(dir: string, version: string): string {
  mkdirSync(dir, { recursive: true });
  const exe = join(dir, "node");
  writeFileSync(exe, `#!/bin/sh\necho v${version}\n`);
  chmodSync(exe, 0o755);
  return exe;
}

/** The error a call throws (every test here checks several parts of one message). */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected an error");
}

let n = 0;
const fresh = () => {
  const d = join(root, `case${n++}`);
  mkdirSync(join(d, "home"), { recursive: true });
  mkdirSync(join(d, "cwd"), { recursive: true });
  return d;
};

test("the `pi` on PATH (npm's link into the package) is followed; current pi prefers a Node its engines allow", () => {
  const d = fresh();
  const pkg = fakePi(
    join(d, "prefix", "lib", "node_modules"),
    "@earendil-works/pi-coding-agent",
    "0.87.1",
    ">=22.19.0",
  );
  mkdirSync(join(d, "prefix", "bin"));
  symlinkSync(join(pkg, "dist", "bundle", "cli.js"), join(d, "prefix", "bin", "pi"));
  chmodSync(join(pkg, "dist", "bundle", "cli.js"), 0o755);
  const node = fakeNode(join(d, "node24"), "24.21.0");
  const env = { PATH: `${join(d, "prefix", "bin")}:${join(d, "node24")}:/usr/bin:/bin`, HOME: join(d, "home") };
  const cmd = resolvePiCommand({ env, cwd: join(d, "cwd"), childRuntime: "auto" });
  expect(cmd.packageDir).toBe(pkg);
  expect(cmd.argv).toEqual([node, join(pkg, "dist", "bundle", "cli.js")]);
  expect(cmd.describe).toBe(`pi 0.87.1 · node 24.21.0 · ${pkg}`);
  expect(cmd.settles).toBe(true);
});

test("a Node too old for current pi is passed over for Bun, and the reason is in the error when there is no Bun", () => {
  const d = fresh();
  const pkg = fakePi(join(d, "cwd", "node_modules"), "@earendil-works/pi-coding-agent", "0.87.1", ">=22.19.0");
  fakeNode(join(d, "node20"), "20.20.2");
  const env = { PATH: `${join(d, "node20")}:/usr/bin:/bin`, HOME: join(d, "home") };
  const auto = resolvePiCommand({ env, cwd: join(d, "cwd"), childRuntime: "auto" });
  expect(auto.argv).toEqual([process.execPath, "--no-install", join(pkg, "dist", "bun", "cli.js")]);
  expect(auto.pi.runtime).toBe(`bun ${Bun.version}`);
  const err = thrown(() => resolvePiCommand({ env, cwd: join(d, "cwd"), childRuntime: "node" }));
  expect(err).toBeInstanceOf(PiNotFoundError);
  expect(err.message).toContain("pi 0.87.1");
  expect(err.message).toContain("needs Node >=22.19.0");
  expect(err.message).toContain("node 20.20.2");
});

test("the old package name is found too, and old pi prefers Bun (it starts 2.5× faster there)", () => {
  const d = fresh();
  const pkg = fakePi(join(d, "cwd", "node_modules"), "@mariozechner/pi-coding-agent", "0.73.1", ">=20.0.0");
  fakeNode(join(d, "node24"), "24.21.0");
  const env = { PATH: `${join(d, "node24")}:/usr/bin:/bin`, HOME: join(d, "home") };
  const cmd = resolvePiCommand({ env, cwd: join(d, "cwd", "sub"), childRuntime: "auto" });
  expect(cmd.packageDir).toBe(pkg);
  expect(cmd.argv[0]).toBe(process.execPath);
  expect(cmd.settles).toBe(false);
  expect(resolvePiCommand({ env, cwd: join(d, "cwd"), childRuntime: "node" }).argv).toEqual([
    join(d, "node24", "node"),
    join(pkg, "dist", "bundle", "cli.js"),
  ]);
});

test("within one folder the current name wins over the old one; the global npm prefix is searched", () => {
  const d = fresh();
  const global = join(d, "npm-prefix", "lib", "node_modules");
  fakePi(global, "@mariozechner/pi-coding-agent", "0.73.1", ">=20.0.0");
  const current = fakePi(global, "@earendil-works/pi-coding-agent", "0.87.1", ">=22.19.0");
  const env = { PATH: "/usr/bin:/bin", HOME: join(d, "home"), npm_config_prefix: join(d, "npm-prefix") };
  expect(resolvePiCommand({ env, cwd: join(d, "cwd"), childRuntime: "auto" }).packageDir).toBe(current);
});

test("the running pi (inside a parent pi) comes before everything else", () => {
  const d = fresh();
  const parent = fakePi(join(d, "parent", "node_modules"), "@mariozechner/pi-coding-agent", "0.73.1", ">=20.0.0");
  fakePi(join(d, "cwd", "node_modules"), "@earendil-works/pi-coding-agent", "0.87.1", ">=22.19.0");
  const env = { PATH: "/usr/bin:/bin", HOME: join(d, "home") };
  const cmd = resolvePiCommand({
    env,
    cwd: join(d, "cwd"),
    script: join(parent, "dist", "cli.js"),
    childRuntime: "auto",
  });
  expect(cmd.packageDir).toBe(parent);
});

test("no pi anywhere: the error names every place searched and the install command", () => {
  const d = fresh();
  const env = { PATH: "/usr/bin:/bin", HOME: join(d, "home") };
  const err = thrown(() => resolvePiCommand({ env, cwd: join(d, "cwd"), childRuntime: "auto" }));
  expect(err).toBeInstanceOf(PiNotFoundError);
  expect(err.message).toContain("npm install -g @earendil-works/pi-coding-agent");
  expect(err.message).toContain("`pi` on PATH");
  expect(err.message).toContain(join(d, "home", ".npm-global", "lib", "node_modules"));
  expect(err.message).toContain(`node_modules above ${join(d, "cwd")}`);
});

test("SUBAGENTS_PI wins and is reported as such", () => {
  const cmd = resolvePiCommand({
    env: { SUBAGENTS_PI: "/bin/true --flag", PATH: "/usr/bin:/bin" },
    cwd: root,
    childRuntime: "auto",
  });
  expect(cmd.argv).toEqual(["/bin/true", "--flag"]);
  expect(cmd.describe).toBe("pi · SUBAGENTS_PI=/bin/true --flag");
});

test("versions and engines ranges", () => {
  expect(compareVersions("0.87.1", "0.74.0")).toBeGreaterThan(0);
  expect(compareVersions("0.73.1", "0.74.0")).toBeLessThan(0);
  expect(compareVersions("1.0.0-beta.1", "1.0.0")).toBe(0);
  expect(satisfiesNode("22.19.0", ">=22.19.0")).toBe(true);
  expect(satisfiesNode("22.18.9", ">=22.19.0")).toBe(false);
  expect(satisfiesNode("20.20.2", ">= 22.19")).toBe(false);
  expect(satisfiesNode("20.0.0", "^20 || ^22")).toBe(true);
});

test("embedded pi: used by default, but never older than the running parent pi; childPi chooses explicitly", () => {
  const d = fresh();
  const parent = fakePi(join(d, "parent", "node_modules"), "@earendil-works/pi-coding-agent", "0.87.1", ">=22.19.0");
  fakeNode(join(d, "node24"), "24.21.0");
  const env = { PATH: `${join(d, "node24")}:/usr/bin:/bin`, HOME: join(d, "home") };
  const script = join(parent, "dist", "bundle", "cli.js");
  const embedded = (version: string) => ({
    argv: ["/opt/subagents"],
    env: { SUBAGENTS_ROLE: "pi" },
    version,
    where: "/opt/subagents",
  });
  const same = resolvePiCommand({
    env,
    cwd: join(d, "cwd"),
    script,
    childRuntime: "auto",
    embedded: embedded("0.87.1"),
  });
  expect(same.argv).toEqual(["/opt/subagents"]);
  expect(same.env).toEqual({ SUBAGENTS_ROLE: "pi" });
  expect(same.builtinChild).toBe(true);
  expect(same.describe).toStartWith("pi 0.87.1 · bun");
  expect(same.describe).toEndWith("· embedded (/opt/subagents)");
  const older = resolvePiCommand({
    env,
    cwd: join(d, "cwd"),
    script,
    childRuntime: "auto",
    embedded: embedded("0.80.0"),
  });
  expect(older.packageDir).toBe(parent);
  expect(older.builtinChild).toBeUndefined();
  // Asked for explicitly, the embedded pi is used even when older; "system" never uses it.
  expect(
    resolvePiCommand({
      env,
      cwd: join(d, "cwd"),
      script,
      childRuntime: "auto",
      childPi: "embedded",
      embedded: embedded("0.80.0"),
    }).argv,
  ).toEqual(["/opt/subagents"]);
  expect(
    resolvePiCommand({
      env,
      cwd: join(d, "cwd"),
      script,
      childRuntime: "auto",
      childPi: "system",
      embedded: embedded("0.87.1"),
    }).packageDir,
  ).toBe(parent);
  expect(() =>
    resolvePiCommand({ env, cwd: join(d, "cwd"), childRuntime: "auto", childPi: "embedded", embedded: null }),
  ).toThrow(/no subagents executable with pi inside/);
  // A path: the package it belongs to, under the runtime it needs.
  expect(resolvePiCommand({ env, cwd: join(d, "cwd"), childRuntime: "auto", childPi: script }).argv).toEqual([
    join(d, "node24", "node"),
    script,
  ]);
  expect(() => resolvePiCommand({ env, cwd: join(d, "cwd"), childRuntime: "auto", childPi: join(d, "nope") })).toThrow(
    /does not exist/,
  );
});

test("embedded pi in the CLI: the newer of it and the pi the user installed; a user's pi that cannot run here loses", () => {
  const d = fresh();
  const installed = fakePi(join(d, "cwd", "node_modules"), "@earendil-works/pi-coding-agent", "1.5.2", ">=22.19.0");
  fakeNode(join(d, "node24"), "24.21.0");
  const env = { PATH: `${join(d, "node24")}:/usr/bin:/bin`, HOME: join(d, "home") };
  const embedded = (version: string) => ({
    argv: ["/opt/subagents"],
    env: { SUBAGENTS_ROLE: "pi" },
    version,
    where: "/opt/subagents",
  });
  const newer = resolvePiCommand({ env, cwd: join(d, "cwd"), childRuntime: "auto", embedded: embedded("0.87.1") });
  expect(newer.packageDir).toBe(installed);
  expect(newer.describe).toBe(`pi 1.5.2 · node 24.21.0 · ${installed}`);
  expect(
    resolvePiCommand({ env, cwd: join(d, "cwd"), childRuntime: "auto", embedded: embedded("1.5.2") }).argv,
  ).toEqual(["/opt/subagents"]);
  expect(
    resolvePiCommand({ env, cwd: join(d, "elsewhere"), childRuntime: "auto", embedded: embedded("0.87.1") }).argv,
  ).toEqual(["/opt/subagents"]);
  // Only an old Node at hand: the user's newer pi cannot start, the embedded one can.
  fakeNode(join(d, "node20"), "20.0.0");
  const oldNode = { PATH: `${join(d, "node20")}:/usr/bin:/bin`, HOME: join(d, "home") };
  expect(
    resolvePiCommand({ env: oldNode, cwd: join(d, "cwd"), childRuntime: "node", embedded: embedded("0.87.1") }).argv,
  ).toEqual(["/opt/subagents"]);
});

test("settings: childPi takes a path only from the user's own settings, never from a project's", async () => {
  const { mergeSettings, defaultSettings } = await import("../../../src/core/settings.ts");
  expect(mergeSettings(defaultSettings(), { childPi: "/opt/pi" }, "user", true).settings.childPi).toBe("/opt/pi");
  const project = mergeSettings(defaultSettings(), { childPi: "/tmp/evil" }, "project", false);
  expect(project.settings.childPi).toBe("auto");
  expect(project.warnings[0]).toContain("only in your own settings");
  expect(mergeSettings(defaultSettings(), { childPi: "system" }, "project", false).settings.childPi).toBe("system");
  expect(mergeSettings(defaultSettings(), { childPi: "nonsense" }).warnings[0]).toContain(
    "must be auto, embedded, system or an absolute path",
  );
});
