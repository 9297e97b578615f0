// The build hooks the embedded pi's bundle in two places (scripts/executable.ts). A pi whose code changed shape
// must fail the build loudly, not ship an executable whose children silently lose our extension.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PI_DIR } from "../scripts/executable.ts";
import { checkHooks, emptyHookReport, hookPiSource } from "../src/embedded/pi-hooks.ts";

const BUNDLE = join(PI_DIR, "dist", "bundle");
const files = () => [join(BUNDLE, "cli-runtime.js"), ...readdirSync(join(BUNDLE, "chunks")).map((f) => join(BUNDLE, "chunks", f))];
const empty = emptyHookReport;

test("the installed pi's bundle has each hooked function exactly once, and the hooks land", () => {
  const found = empty();
  const out = files().map((f) => hookPiSource(f, readFileSync(f, "utf8"), found));
  expect(() => checkHooks(found, PI_DIR)).not.toThrow();
  const joined = out.join("\n");
  expect(joined).toContain('Symbol.for("subagents.extension-loader")');
  expect(joined).toContain('extensionFactories:globalThis[Symbol.for("subagents.pi-factories")]');
  expect(joined).toContain('import { createJiti as __subagentsCreateJiti } from "jiti/static";');
  expect(joined).not.toMatch(/\w+\("jiti"\)\.createJiti/);
});

test("a pi whose loader or main changed shape fails the build with what is missing", () => {
  const found = empty();
  for (const f of files()) {
    const renamed = readFileSync(f, "utf8").replace("async function loadExtensionModule(", "async function loadExtensionModuleV2(");
    hookPiSource(f, renamed, found);
  }
  expect(() => checkHooks(found, PI_DIR)).toThrow(/loadExtensionModule/);
  expect(() => hookPiSource(join(BUNDLE, "cli-runtime.js"), "run(process.argv.slice(2));", empty())).toThrow(/CLI runtime/);
  const noJiti = empty();
  for (const f of files()) hookPiSource(f, readFileSync(f, "utf8").replace('("jiti").createJiti', '("jiti2").createJiti'), noJiti);
  expect(() => checkHooks(noJiti, PI_DIR)).toThrow(/user extensions would not load/);
  const noOptions = empty();
  hookPiSource("chunk.js", "async function main(args){let x=[...a];}", noOptions);
  expect(noOptions.main).toHaveLength(0);
});

test("bump-pi: a new internal @earendil-works dependency gets an override; existing ones and others are kept", async () => {
  const { overridesFor } = await import("../scripts/bump-pi.ts");
  const current = { "@earendil-works/pi-ai": "npm:yaml@2.9.0", "lovely-mermaid": "npm:yaml@2.9.0" };
  const deps = { "@earendil-works/pi-ai": "1.6.0", "@earendil-works/pi-new": "1.6.0", chalk: "6.0.0" };
  expect(overridesFor(deps, current, "npm:yaml@2.9.0")).toEqual({ ...current, "@earendil-works/pi-new": "npm:yaml@2.9.0" });
});
