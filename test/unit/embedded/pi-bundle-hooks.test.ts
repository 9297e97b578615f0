// The build hooks the embedded pi's bundle in two places (scripts/executable.ts). A pi whose code changed shape
// must fail the build loudly, not ship an executable whose children silently lose our extension.
import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PI_DIR } from "../../../scripts/executable.ts";
import { checkHooks, emptyHookReport, hookPiSource } from "../../../src/embedded/pi-hooks.ts";
import { keepNativeFetch, settingsMayChangeFetch } from "../../../src/embedded/native-fetch.ts";
import { installRevisionMemo } from "../../../src/embedded/revision-memo.ts";
import { hookTypeboxUpdate } from "../../../src/embedded/typebox-update.ts";

const BUNDLE = join(PI_DIR, "dist", "bundle");
const files = () => [
  join(BUNDLE, "cli-runtime.js"),
  ...readdirSync(join(BUNDLE, "chunks")).map((f) => join(BUNDLE, "chunks", f)),
];
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
  // undici is loaded only on demand, and pi's dispatcher setup first asks whether Bun's fetch can stay.
  expect(joined).not.toMatch(/\bvar undici=\w+\(require_undici\(\),1\)/);
  expect(joined).toContain('(globalThis[Symbol.for("subagents.native-fetch")]?.(');
  // pi's load-time validators are made lazily, and TypeBox's Value is published for them to interpret with.
  expect(joined).not.toMatch(/\b\w+=Compile\(\w+\)[;,]/);
  expect(joined).toContain(
    'validateModelsConfig=(globalThis[Symbol.for("subagents.lazy-validator")]?.(ModelsConfigSchema,',
  );
  expect(found.typeboxValue).toHaveLength(1);
  // pi's file revisions are asked through the memo.
  expect(found.revision).toHaveLength(1);
  expect(joined).toContain(
    'function getFileRevision(path){const memo=globalThis[Symbol.for("subagents.file-revision")];',
  );
  // TypeBox 1.3's Update copies shallowly (as 1.4 does).
  expect(found.typeboxUpdate).toHaveLength(1);
  // A kept child's RPC output leaves out streaming updates.
  expect(found.rpcQuiet).toHaveLength(1);
  expect(joined).toContain(
    '(__subagentsQuietRpc&&(event.type==="message_update"||event.type==="tool_execution_update"))||output(toJsonEvent(event))',
  );
  // pi's retries reach the child extension too.
  expect(found.retry).toHaveLength(1);
  expect(joined).toContain(
    'this._emit(((e)=>(globalThis[Symbol.for("subagents.retry-event")]?.(e),e))({type:"auto_retry_start",attempt:',
  );
});

test("a file revision is read once per turn of the event loop, and again in the next", async () => {
  installRevisionMemo("subagents.test-revision");
  const memo = (globalThis as Record<symbol, unknown>)[Symbol.for("subagents.test-revision")] as (
    p: string,
    read: (p: string) => unknown,
  ) => unknown;
  let reads = 0;
  let revision = "r1";
  const read = () => (reads++, revision);
  expect([memo("/a", read), memo("/a", read), memo("/a", read)]).toEqual(["r1", "r1", "r1"]);
  expect(reads).toBe(1);
  memo("/b", read);
  expect(reads).toBe(2);
  await Promise.resolve(); // a microtask later: still the same turn
  memo("/a", read);
  expect(reads).toBe(2);
  revision = "r2"; // another process changed the file
  await new Promise((r) => setImmediate(r));
  expect(memo("/a", read)).toBe("r2");
  expect(reads).toBe(3);
});

test("Bun's fetch stays only without proxy variables, at pi's default idle timeout, and before any swap", () => {
  expect(keepNativeFetch({}, 300_000, 300_000, true)).toBe(true);
  for (const v of ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"])
    expect(keepNativeFetch({ [v]: "http://proxy:8080" }, 300_000, 300_000, true)).toBe(false);
  expect(keepNativeFetch({ HTTPS_PROXY: "" }, 300_000, 300_000, true)).toBe(true);
  expect(keepNativeFetch({}, 60_000, 300_000, true)).toBe(false);
  expect(keepNativeFetch({}, 300_000, 300_000, false)).toBe(false);
});

test("pi settings that name an idle timeout or a proxy (global or the project's) keep pi's own HTTP setup", () => {
  const root = mkdtempSync(join(tmpdir(), "native-fetch-"));
  try {
    const [agent, project] = [join(root, "agent"), join(root, "project")];
    mkdirSync(join(project, ".pi"), { recursive: true });
    mkdirSync(agent, { recursive: true });
    const env = { PI_CODING_AGENT_DIR: agent };
    expect(settingsMayChangeFetch(env, project)).toBe(false);
    writeFileSync(join(agent, "settings.json"), JSON.stringify({ defaultModel: "x" }));
    expect(settingsMayChangeFetch(env, project)).toBe(false);
    writeFileSync(join(agent, "settings.json"), JSON.stringify({ httpIdleTimeoutMs: 60_000 }));
    expect(settingsMayChangeFetch(env, project)).toBe(true);
    writeFileSync(join(agent, "settings.json"), "{}");
    writeFileSync(join(project, ".pi", "settings.json"), JSON.stringify({ httpProxy: "http://proxy:8080" }));
    expect(settingsMayChangeFetch(env, project)).toBe(true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a pi whose undici setup changed shape fails the build", () => {
  const main = files().find((f) => readFileSync(f, "utf8").includes("function configureHttpDispatcher("))!;
  const source = readFileSync(main, "utf8");
  expect(() =>
    hookPiSource(
      main,
      source.replace("function configureHttpDispatcher(", "function configureHttpDispatcherV2("),
      empty(),
    ),
  ).toThrow(/undici/);
  expect(() => hookPiSource(main, source.replace("var undici=", "var undiciV2="), empty())).toThrow(/undici/);
  const neither = empty();
  hookPiSource(
    main,
    source
      .replace("function configureHttpDispatcher(", "function configureHttpDispatcherV2(")
      .replace("var undici=", "var undiciV2="),
    neither,
  );
  expect(() => checkHooks(neither, PI_DIR)).toThrow(/configureHttpDispatcher/);
  // The user's pi compiled once by us: without this shape it only starts a little slower, so it still compiles.
  const others = empty();
  for (const f of files())
    hookPiSource(
      f,
      f === main
        ? source
            .replace("function configureHttpDispatcher(", "function configureHttpDispatcherV2(")
            .replace("var undici=", "var undiciV2=")
        : readFileSync(f, "utf8"),
      others,
    );
  expect(() => checkHooks(others, PI_DIR, { speedupsOptional: true })).not.toThrow();
  const renamedFetch = source.replaceAll("originalGlobalFetch", "firstGlobalFetch");
  expect(() => hookPiSource(main, renamedFetch, empty())).toThrow(/originalGlobalFetch/);
});

test("a pi whose loader or main changed shape fails the build with what is missing", () => {
  const found = empty();
  for (const f of files()) {
    const renamed = readFileSync(f, "utf8").replace(
      "async function loadExtensionModule(",
      "async function loadExtensionModuleV2(",
    );
    hookPiSource(f, renamed, found);
  }
  expect(() => checkHooks(found, PI_DIR)).toThrow(/loadExtensionModule/);
  expect(() => hookPiSource(join(BUNDLE, "cli-runtime.js"), "run(process.argv.slice(2));", empty())).toThrow(
    /CLI runtime/,
  );
  const noJiti = empty();
  for (const f of files())
    hookPiSource(f, readFileSync(f, "utf8").replace('("jiti").createJiti', '("jiti2").createJiti'), noJiti);
  expect(() => checkHooks(noJiti, PI_DIR)).toThrow(/user extensions would not load/);
  const noOptions = empty();
  hookPiSource("chunk.js", "async function main(args){let x=[...a];}", noOptions);
  expect(noOptions.main).toHaveLength(0);
});

test("bump-pi: a new internal @earendil-works dependency gets an override; existing ones and others are kept", async () => {
  const { overridesFor } = await import("../../../scripts/bump-pi.ts");
  const current = { "@earendil-works/pi-ai": "npm:yaml@2.9.0", "lovely-mermaid": "npm:yaml@2.9.0" };
  const deps = { "@earendil-works/pi-ai": "1.6.0", "@earendil-works/pi-new": "1.6.0", chalk: "6.0.0" };
  expect(overridesFor(deps, current, "npm:yaml@2.9.0")).toEqual({
    ...current,
    "@earendil-works/pi-new": "npm:yaml@2.9.0",
  });
});

test("TypeBox's Update in pi's bundle, hooked, copies the type shallowly and gives the same type as before", () => {
  const source = files()
    .map((f) => readFileSync(f, "utf8"))
    .find((s) => s.includes("function Update(current,hidden,enumerable){Metrics.update+=1;"))!;
  const original = /function Update\(current,hidden,enumerable\)\{[\s\S]*?return Freeze\(result\)\}/.exec(source)![0];
  const hooked = hookTypeboxUpdate(original)!;
  expect(hooked).toContain("__subagentsShallowType(current,hidden,enumerable)");
  // The function as pi has it and as hooked, with TypeBox's own deep Clone and no freezing (its default).
  const deepClone = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(deepClone)
      : v && typeof v === "object"
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deepClone(x)]))
        : v;
  const make = (code: string) =>
    new Function("Metrics", "settings_exports", "Clone", "Freeze", `${code}\nreturn Update;`)(
      { update: 0 },
      { Get: () => ({ enumerableKind: false }) },
      deepClone,
      (x: unknown) => x,
    );
  const before = make(original);
  const after = make(hooked);
  const type = { type: "object", properties: { path: { type: "string", description: "a path" } }, required: ["path"] };
  Object.defineProperty(type, "~kind", { value: "Object", enumerable: false, configurable: true, writable: true });
  const a = before(type, { "~optional": true }, { description: "d" });
  const b = after(type, { "~optional": true }, { description: "d" });
  expect(JSON.stringify(b)).toBe(JSON.stringify(a));
  expect([b["~optional"], b["~kind"], Object.keys(b).includes("~optional")]).toEqual([true, "Object", false]);
  expect(b.properties).toBe(type.properties); // shared, not cloned
  expect(type).not.toHaveProperty("description");
});
