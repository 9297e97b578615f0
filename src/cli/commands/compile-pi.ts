// `subagents __compile-pi PI_PACKAGE_DIR OUT_DIR` (internal; started in the background by src/host/compiled-pi.ts):
// compiles the user's pi from its self-contained bundle into OUT_DIR/pi, with the same hooks as the pi inside
// this executable (src/embedded/pi-hooks.ts) and our child extension built in. pi's package files are linked
// beside it (a compiled pi reads them from its own folder). Writes OUT_DIR/ready, or OUT_DIR/failed with why, when
// and by which build (src/host/compiled-pi-state.ts); only a bundle our hooks do not fit is a final failure.
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { BUILTIN_KEY, FACTORIES_KEY, LOADER_KEY, STUB_MARK } from "../../embedded/builtin-extension.ts";
import {
  checkHooks,
  emptyHookReport,
  HookShapeError,
  hookPiSource,
  QUICKJS_KEY,
  QUICKJS_WASM,
} from "../../embedded/pi-hooks.ts";
import { nativeFetchOfferJs } from "../../embedded/native-fetch.ts";
import { installLazyValidators, TYPEBOX_VALUE_KEY, VALIDATOR_KEY } from "../../embedded/lazy-validators.ts";
import { installRevisionMemo, REVISION_MEMO_KEY } from "../../embedded/revision-memo.ts";
import { childExtensionSource } from "../../host/child-extension-path.ts";
import {
  COMPILED_EXE,
  FAILED,
  LOCK,
  lockFor,
  READY,
  readFailure,
  readLock,
  tail,
  WORK_PREFIX,
  writeFailure,
  writeLock,
  writeSource,
} from "../../host/compiled-pi-state.ts";
import { processRuns } from "../../host/process-identity.ts";
import { readPiPackage } from "../../host/pi-discovery.ts";
import { versionLine } from "../version-info.ts";
import { CHILD_JIT_MARK, dropChildJitEnv } from "../../host/child-jit.ts";
import { extensionSource } from "../installed.ts";
import { EXIT, UsageError } from "../errors.ts";

/** What the compiled pi runs before pi's modules load (the pi role's prelude, as plain JS). */
function prelude(): string {
  const key = (k: string) => `Symbol.for(${JSON.stringify(k)})`;
  return `import { closeSync, openSync, readSync } from "node:fs";
import { dirname } from "node:path";
import child from "./child.js";
process.env.PI_PACKAGE_DIR = dirname(process.execPath);
globalThis[${key(QUICKJS_KEY)}] = dirname(process.execPath) + "/${QUICKJS_WASM}";
(${dropChildJitEnv.toString()})(process.env, ${JSON.stringify(CHILD_JIT_MARK)});
const mark = ${JSON.stringify(STUB_MARK)};
const isStub = (file) => { let fd; try { fd = openSync(file, "r"); const b = Buffer.alloc(mark.length); return readSync(fd, b, 0, b.length, 0) === b.length && b.toString("utf8") === mark; } catch { return false; } finally { if (fd !== undefined) closeSync(fd); } };
const env = process.env;
const atMaxDepth = env.PI_SUBAGENT_CHILD === "1" && !!env.PI_SUBAGENT_MAX_DEPTH && Number(env.PI_SUBAGENT_DEPTH) >= Number(env.PI_SUBAGENT_MAX_DEPTH);
const builtin = async (pi) => (atMaxDepth ? undefined : (await import("./extension.js")).default(pi));
globalThis[${key(BUILTIN_KEY)}] = builtin;
globalThis[${key(LOADER_KEY)}] = (file) => (file.endsWith(".js") && isStub(file) ? builtin : undefined);
globalThis[${key(FACTORIES_KEY)}] = [child];
${nativeFetchOfferJs()}
(${installLazyValidators.toString()})(${JSON.stringify(VALIDATOR_KEY)}, ${JSON.stringify(TYPEBOX_VALUE_KEY)});
(${installRevisionMemo.toString()})(${JSON.stringify(REVISION_MEMO_KEY)});
`;
}

/** pi's package files, linked where a compiled pi looks for them (its executable's folder). */
function linkAssets(pkgDir: string, out: string): void {
  const links: [string, string][] = [
    ["package.json", "package.json"],
    [path.join("dist", "modes", "interactive", "theme"), "theme"],
    [path.join("dist", "modes", "interactive", "assets"), "assets"],
    [path.join("dist", "core", "export-html"), "export-html"],
  ];
  // Resolved from pi's bundle, as pi itself does (its package folder may be a link to another install).
  const fromBundle = createRequire(fs.realpathSync(path.join(pkgDir, "dist", "bundle", "cli-runtime.js")));
  for (const [asset, to] of [
    ["@silvia-odwyer/photon-node/photon_rs_bg.wasm", "photon_rs_bg.wasm"],
    ["quickjs-wasi/quickjs.wasm", QUICKJS_WASM],
  ]) {
    try {
      links.push([fromBundle.resolve(asset), to]);
    } catch {
      // no image library or no codemode: pi says so when it needs one
    }
  }
  for (const [from, to] of links) {
    const target = path.isAbsolute(from) ? from : path.join(pkgDir, from);
    fs.rmSync(path.join(out, to), { force: true, recursive: true });
    if (fs.existsSync(target)) fs.symlinkSync(target, path.join(out, to));
  }
}

/** An error's text: Bun.build throws an AggregateError ("Bundle failed") whose messages are in `errors`. */
function describeError(err: unknown): string {
  const e = err as { message?: string; errors?: unknown[] };
  const inner = Array.isArray(e?.errors) ? e.errors.map((x) => String((x as { message?: string })?.message ?? x)) : [];
  return [e?.message ?? String(err), ...inner].filter(Boolean).join("\n");
}

/** Scratch folders of compiles whose process is gone (killed midway): ours is named for our pid. */
function removeDeadWork(out: string): void {
  for (const name of fs.readdirSync(out)) {
    if (!name.startsWith(WORK_PREFIX)) continue;
    const pid = Number(/^\.build-(\d+)-/.exec(name)?.[1]);
    if (!pid || !processRuns(pid)) fs.rmSync(path.join(out, name), { recursive: true, force: true });
  }
}

export async function cmdCompilePi(argv: string[]): Promise<number> {
  const [pkgDir, out] = argv;
  if (!pkgDir || !out) throw new UsageError("usage: subagents __compile-pi PI_PACKAGE_DIR OUT_DIR");
  fs.mkdirSync(out, { recursive: true });
  // The lock names this process (the run that started it wrote the same; a compile started by hand takes it here).
  writeLock(out, lockFor(process.pid, readLock(out)?.tries ?? 1));
  writeSource(out, { pkgDir, binary: process.execPath, piVersion: readPiPackage(pkgDir)?.version ?? "" });
  removeDeadWork(out);
  const work = fs.mkdtempSync(path.join(out, `${WORK_PREFIX}${process.pid}-`));
  let shapeProblem = false;
  try {
    fs.writeFileSync(path.join(work, "child.js"), childExtensionSource());
    fs.writeFileSync(path.join(work, "extension.js"), extensionSource());
    fs.writeFileSync(path.join(work, "prelude.js"), prelude());
    const runtime = path.join(pkgDir, "dist", "bundle", "cli-runtime.js");
    fs.writeFileSync(path.join(work, "entry.js"), `import "./prelude.js";\nimport ${JSON.stringify(runtime)};\n`);
    // Codemode's sandbox: a compiled pi starts `new Worker("./src/extensions/codemode/worker.ts")`, a path in pi's
    // own repository, so pi's bundled worker is compiled in under that name (as in our executable).
    const worker = path.join(pkgDir, "dist", "bundle", "chunks", "codemode-worker.js");
    const entrypoints = [path.join(work, "entry.js")];
    if (fs.existsSync(worker)) {
      const at = path.join(work, "src", "extensions", "codemode", "worker.ts");
      fs.mkdirSync(path.dirname(at), { recursive: true });
      fs.writeFileSync(at, `import ${JSON.stringify(worker)};\n`);
      entrypoints.push(at);
    }
    const found = emptyHookReport();
    const result = await Bun.build({
      entrypoints,
      root: work,
      compile: { outfile: path.join(work, COMPILED_EXE), autoloadDotenv: false, autoloadBunfig: false },
      minify: true,
      sourcemap: "none",
      format: "esm",
      bytecode: true,
      splitting: true,
      plugins: [
        {
          name: "pi-bundle-hooks",
          setup(build) {
            build.onLoad(
              { filter: /[\\/]dist[\\/]bundle[\\/](cli-runtime\.js|chunks[\\/][^\\/]+\.js)$/ },
              ({ path: file }) => {
                const source = fs.readFileSync(file, "utf8");
                try {
                  return { contents: hookPiSource(file, source, found), loader: "js" };
                } catch (err) {
                  shapeProblem = true; // the hooks do not fit this pi (Bun reports it as "Bundle failed")
                  throw err;
                }
              },
            );
          },
        },
      ],
    } as Parameters<typeof Bun.build>[0]);
    if (!result.success) throw new Error(result.logs.map(String).join("\n") || "Bun.build failed");
    checkHooks(found, pkgDir, { speedupsOptional: true });
    fs.renameSync(path.join(work, COMPILED_EXE), path.join(out, COMPILED_EXE));
    linkAssets(pkgDir, out);
    fs.writeFileSync(path.join(out, READY), `${new Date().toISOString()}\n`);
    fs.rmSync(path.join(out, FAILED), { force: true });
    return EXIT.ok;
  } catch (err) {
    const text = describeError(err);
    const shape = shapeProblem && !(err instanceof HookShapeError);
    const reason = tail(
      shape
        ? `pi (${pkgDir}) does not have the shape this build hooks:\n  ${text
            .split("\n")
            .filter((l) => l !== "Bundle failed")
            .join("\n  ")}`
        : text,
    );
    writeFailure(out, {
      at: Date.now(),
      reason,
      build: versionLine(),
      final: err instanceof HookShapeError || shapeProblem,
      attempts: (readFailure(out)?.attempts ?? 0) + 1,
    });
    return EXIT.taskFailed;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
    if (readLock(out)?.pid === process.pid) fs.rmSync(path.join(out, LOCK), { force: true });
  }
}
