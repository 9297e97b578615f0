// `subagents install` puts a stub in pi's extensions folder and the bundle beside it: a pi from npm imports the
// bundle through the stub, while the pi inside our executable uses its built-in copy, so no child transpiles the
// 600 KB bundle again (what made every child of an installed extension slow).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { script } from "../../../src/scripted/model-server.ts";
import { cli, piCmd, piWorld, REPO, type PiWorld } from "../../support/pi-env.ts";
import { isStub } from "../../../src/embedded/builtin-extension.ts";

let world: PiWorld;
let stub: string;
let bundle: string;
beforeAll(async () => {
  world = await piWorld();
  // Children may delegate once more, so every child loads the installed extension.
  world.setSubagentSettings({ maxDepth: 2 });
  expect((await cli(world, ["install"], { binary: true })).code).toBe(0);
  stub = join(world.agentDir, "extensions", "subagents.js");
  bundle = join(world.agentDir, "subagents-runtime", "extension.js");
});
afterAll(async () => {
  await world.close();
});

const toolsOf = (q: { tools?: { function?: { name?: string } }[] }) => (q.tools ?? []).map((t) => t.function?.name);

test("install writes a small stub that imports the bundle, and the bundle is this build's", () => {
  expect(statSync(stub).size).toBeLessThan(2_000);
  expect(readFileSync(stub, "utf8")).toContain("../subagents-runtime/extension.js");
  expect(readFileSync(bundle, "utf8")).toBe(readFileSync(join(REPO, "dist", "extension.js"), "utf8"));
});

test("this checkout's pi manifest (for `pi install <checkout>`) names the same kind of stub, beside this build's bundle", async () => {
  const manifest = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).pi.extensions as string[];
  expect(manifest).toHaveLength(1);
  const file = join(REPO, manifest[0]);
  expect(isStub(file)).toBe(true);
  expect(readFileSync(file, "utf8")).toContain('new URL("./extension.js", import.meta.url)');
  expect(existsSync(join(file, "..", "extension.js"))).toBe(true);
  // pi loads it as its extension: our tools are there.
  const before = world.server.requests.length;
  const proc = Bun.spawn({
    cmd: [
      ...piCmd("current", "node"),
      "-p",
      "--no-session",
      "--no-extensions",
      "-e",
      file,
      `manifest ${script([{ text: "ok" }])}`,
    ],
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = await new Response(proc.stderr).text();
  expect(await proc.exited, stderr).toBe(0);
  expect(toolsOf(world.server.requests.slice(before).at(-1)!)).toContain("delegate_to_subagents");
}, 60_000);

test("an embedded child uses the built-in extension; a system-pi child imports the bundle through the stub", async () => {
  const original = readFileSync(bundle, "utf8");
  const marker = join(world.root, "bundle-loaded");
  // A bundle that leaves a mark and registers a tool of its own name: whoever imports it shows.
  writeFileSync(
    bundle,
    `import { writeFileSync } from "node:fs";\nexport default function (pi) {\n  writeFileSync(${JSON.stringify(marker)}, "x");\n  pi.registerTool({ name: "bundle_loaded", label: "x", description: "x", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [] }) });\n}\n`,
  );
  try {
    const run = async (prompt: string, env: Record<string, string> = {}) => {
      const before = world.server.requests.length;
      const r = await cli(world, ["delegate", `${prompt} ${script([{ text: "ok" }])}`, "--json"], {
        binary: true,
        env,
      });
      expect(r.code, r.stderr).toBe(0);
      return world.server.requests.slice(before).find((q) => JSON.stringify(q.messages).includes(prompt))!;
    };
    const embedded = await run("embedded child");
    expect(toolsOf(embedded)).toContain("delegate_to_subagents");
    expect(toolsOf(embedded)).not.toContain("bundle_loaded");
    expect(existsSync(marker)).toBe(false);

    const system = await run("system child", { SUBAGENTS_PI: piCmd("current", "node").join(" ") });
    expect(toolsOf(system)).toContain("bundle_loaded");
    expect(existsSync(marker)).toBe(true);

    // A child that may not delegate further: the stub returns before importing anything.
    rmSync(marker, { force: true });
    world.setSubagentSettings({ maxDepth: 1 });
    try {
      const last = await run("max-depth child", { SUBAGENTS_PI: piCmd("current", "node").join(" ") });
      expect(toolsOf(last)).not.toContain("bundle_loaded");
      expect(existsSync(marker)).toBe(false);
    } finally {
      world.setSubagentSettings({ maxDepth: 2 });
    }
  } finally {
    writeFileSync(bundle, original);
    rmSync(marker, { force: true });
  }
}, 90_000);

test("uninstall removes the stub and the bundle", async () => {
  expect((await cli(world, ["install", "--uninstall"], { binary: true })).code).toBe(0);
  expect(existsSync(stub)).toBe(false);
  expect(existsSync(bundle)).toBe(false);
});
