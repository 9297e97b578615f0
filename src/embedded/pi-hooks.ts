// The embedded pi's two hooks, made to the source of pi's self-contained bundle (dist/bundle) as it loads: by the
// build's plugin (scripts/executable.ts) for the executable, and by a runtime plugin (src/embedded/pi-role.ts)
// when our CLI runs from a source checkout, so both run the same pi.
import { FACTORIES_KEY, LOADER_KEY } from "./builtin-extension.ts";
import { hookValidators } from "./lazy-validators.ts";
import { hookNativeFetch } from "./native-fetch.ts";
import { hookFileRevision } from "./revision-memo.ts";
import { hookTypeboxUpdate } from "./typebox-update.ts";
import { hookRpcQuiet } from "./rpc-quiet.ts";
import { hookRetryEvents } from "./retry-events.ts";

/**
 * The two changes the embedded pi gets, made while compiling its bundle. Both fail the build when pi's code no
 * longer has the shape they rely on, so a new pi can never be embedded half-hooked (`npm run bump-pi` shows it).
 * 1. Its extension loader first asks our hook (src/embedded/builtin-extension.ts) whether a file is our own
 *    installed stub, whose extension is built in. pi would otherwise start jiti with its Babel transform and every
 *    module an extension may import just to read a five-line file — in every child of an installed extension.
 * 2. Its CLI runtime's `main(argv)` call gets our child extension as an extension factory (what `-e child.js`
 *    would load through jiti, already compiled to bytecode).
 * And one fix: the bundle loads jiti (for every other extension a user has) with a runtime `require("jiti")`
 * relative to the bundle's own file, which a compiled executable cannot resolve; it becomes a static import, so
 * jiti is compiled in (its "static" entry, which imports its Babel transform statically for this purpose).
 */
const LOADER_HOOK_AT = /async function loadExtensionModule\((\w+),(\w+)\)\{/;
const MAIN_SHAPE = /async function main\((\w+),(\w+)\)\{[\s\S]{0,400}?\2\?\.extensionFactories/;
const MAIN_CALL = /\bmain\(process\.argv\.slice\(2\)\);?\s*$/;
export const BUNDLE_FILE = /pi-coding-agent[^\\/]*[\\/]dist[\\/]bundle[\\/](cli-runtime\.js|chunks[\\/][^\\/]+\.js)$/;

const JITI_REQUIRE = /\b\w+\("jiti"\)\.createJiti\b/;
/** Where codemode's QuickJS wasm is looked up next to pi's files; the pi role points it at its own copy. */
const QUICKJS_RESOLVE = /\b\w+\(import\.meta\.url\)\.resolve\("quickjs-wasi\/quickjs\.wasm"\)/g;
export const QUICKJS_KEY = "subagents.quickjs-wasm";
export const QUICKJS_WASM = "quickjs.wasm";

export type HookReport = {
  loader: string[];
  main: string[];
  runtime: string[];
  jiti: string[];
  quickjs: string[];
  fetch: string[];
  validators: string[];
  typeboxValue: string[];
  revision: string[];
  typeboxUpdate: string[];
  rpcQuiet: string[];
  retry: string[];
};

/** Makes the bundle's changes to one file's source; `found` collects where each was made. */
export function hookPiSource(path: string, source: string, found: HookReport): string {
  if (/cli-runtime\.js$/.test(path)) {
    if (!MAIN_CALL.test(source))
      throw new HookShapeError(
        `${path}: no "main(process.argv.slice(2))" call to give our extension to (pi changed its CLI runtime)`,
      );
    found.runtime.push(path);
    return source.replace(
      MAIN_CALL,
      `main(process.argv.slice(2),{extensionFactories:globalThis[Symbol.for(${JSON.stringify(FACTORIES_KEY)})]??[]});\n`,
    );
  }
  if (MAIN_SHAPE.test(source)) found.main.push(path);
  if (JITI_REQUIRE.test(source)) {
    found.jiti.push(path);
    source = `import { createJiti as __subagentsCreateJiti } from "jiti/static";\n${source.replace(JITI_REQUIRE, "__subagentsCreateJiti")}`;
  }
  if (QUICKJS_RESOLVE.test(source)) {
    found.quickjs.push(path);
    source = source.replace(
      QUICKJS_RESOLVE,
      (all) => `(globalThis[Symbol.for(${JSON.stringify(QUICKJS_KEY)})]??${all})`,
    );
  }
  const fetchHooked = hookNativeFetch(path, source);
  if (fetchHooked !== null) {
    found.fetch.push(path);
    source = fetchHooked;
  }
  const lazy = hookValidators(source);
  if (lazy) {
    for (let i = 0; i < lazy.sites; i++) found.validators.push(path);
    if (lazy.value) found.typeboxValue.push(path);
    source = lazy.source;
  }
  const shallow = hookTypeboxUpdate(source);
  if (shallow !== null) {
    found.typeboxUpdate.push(path);
    source = shallow;
  }
  const quiet = hookRpcQuiet(source);
  if (quiet !== null) {
    found.rpcQuiet.push(path);
    source = quiet;
  }
  const retry = hookRetryEvents(source);
  if (retry) {
    for (let i = 0; i < retry.sites; i++) found.retry.push(path);
    source = retry.source;
  }
  const memo = hookFileRevision(source);
  if (memo !== null) {
    found.revision.push(path);
    source = memo;
  }
  const m = LOADER_HOOK_AT.exec(source);
  if (!m) return source;
  found.loader.push(path);
  const hook = `const __subagentsBuiltin=globalThis[Symbol.for(${JSON.stringify(LOADER_KEY)})]?.(${m[1]});if(__subagentsBuiltin)return __subagentsBuiltin;`;
  return source.replace(LOADER_HOOK_AT, (all) => all + hook);
}

/** A pi whose bundle lacks (or doubles) the places our hooks go: final for that pi and this build, unlike a compile
 *  that failed for a passing reason (a full disk, a killed process), which a later run retries. */
export class HookShapeError extends Error {}

/** Throws unless each change was made exactly once (a missed or doubled hook is a pi this build does not know). */
export function checkHooks(found: HookReport, piDir: string, opts: { speedupsOptional?: boolean } = {}): void {
  const problems: string[] = [];
  if (found.runtime.length !== 1)
    problems.push(`pi's CLI runtime (dist/bundle/cli-runtime.js) was hooked ${found.runtime.length} times`);
  if (found.main.length !== 1)
    problems.push(
      `found ${found.main.length} "async function main(args, options)" reading options.extensionFactories (want 1)`,
    );
  if (found.jiti.length !== 1)
    problems.push(
      `found ${found.jiti.length} 'require("jiti").createJiti' to compile jiti in (want 1): user extensions would not load`,
    );
  if (found.loader.length !== 1)
    problems.push(
      `found ${found.loader.length} "async function loadExtensionModule(path, cacheToken)" to hook (want 1)`,
    );
  // For a user's pi compiled once by us, a pi without these shapes only misses a speed-up, never a feature: a
  // speed-up hook may then be missing, never doubled.
  const speedup = (missing: boolean, doubled: boolean, problem: string) => {
    if (doubled || (missing && !opts.speedupsOptional)) problems.push(problem);
  };
  speedup(
    found.fetch.length === 0,
    found.fetch.length > 1,
    `found ${found.fetch.length} undici loads + "function configureHttpDispatcher(timeoutMs=…)" to keep Bun's fetch in children (want 1)`,
  );
  speedup(
    found.typeboxValue.length === 0 || found.validators.length === 0,
    found.typeboxValue.length > 1,
    `found ${found.validators.length} top-level "X=Compile(Schema)" validators and ${found.typeboxValue.length} TypeBox Value namespaces (want ≥ 1 and 1) to build validators lazily`,
  );
  speedup(
    found.revision.length === 0,
    found.revision.length > 1,
    `found ${found.revision.length} "function getFileRevision(path)" to keep revisions for a turn (want 1)`,
  );
  speedup(
    found.typeboxUpdate.length === 0,
    found.typeboxUpdate.length > 1,
    `found ${found.typeboxUpdate.length} TypeBox 1.3 "function Update(current, hidden, enumerable)" deep-cloning its type (want 1; TypeBox 1.4 copies shallowly: drop src/embedded/typebox-update.ts)`,
  );
  speedup(
    found.rpcQuiet.length === 0,
    found.rpcQuiet.length > 1,
    `found ${found.rpcQuiet.length} RPC-mode "session.subscribe(event => { output(toJsonEvent(event)), … agent_settled" to leave streaming updates out of a kept child's output (want 1)`,
  );
  speedup(
    found.retry.length === 0,
    found.retry.length > 1,
    `found ${found.retry.length} 'this._emit({type:"auto_retry_start",…})' to tell the child extension of pi's retries (want 1)`,
  );
  if (problems.length)
    throw new HookShapeError(`pi (${piDir}) does not have the shape this build hooks:\n  ${problems.join("\n  ")}`);
}

export const emptyHookReport = (): HookReport => ({
  loader: [],
  main: [],
  runtime: [],
  jiti: [],
  quickjs: [],
  fetch: [],
  validators: [],
  typeboxValue: [],
  revision: [],
  typeboxUpdate: [],
  rpcQuiet: [],
  retry: [],
});
