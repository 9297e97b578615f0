// The executable's pi role: `subagents` started with SUBAGENTS_ROLE=pi is pi itself (docs/settings.md "Which pi runs the children"). The parent
// sets the switch for the child only; we drop it at once, so nothing the child runs (bash, a nested `subagents`)
// inherits it.
import * as path from "node:path";
import { isCompiledBinary, ROLE_ENV } from "../host/embedded-pi.ts";
import { dropChildJitEnv } from "../host/child-jit.ts";
import { assetCacheDir, materialize, PI_ASSETS } from "./pi-assets.ts";
import { EMBEDDED_PI_VERSION } from "../host/embedded-version.ts";
import { PHOTON_WASM, redirectPhotonWasm } from "./photon-wasm.ts";
import { offerNativeFetch } from "./native-fetch.ts";
import { startForwarder } from "../host/net-forward.ts";
import { BUNDLE_FILE, emptyHookReport, hookPiSource, QUICKJS_KEY, QUICKJS_WASM } from "./pi-hooks.ts";

export async function runPiRole(ourVersion: string): Promise<void> {
  const buildKey = path.join(ourVersion, `pi-${EMBEDDED_PI_VERSION}`);
  delete process.env[ROLE_ENV];
  dropChildJitEnv();
  offerNativeFetch();
  // A sandbox with the network closed: its forwarder runs in this process, listening before pi makes any call.
  if (process.env.SUBAGENTS_NET_SOCK && !(await startForwarder(process.env))) {
    process.stderr.write("subagents: the sandbox's network forwarder could not listen inside the sandbox\n");
    process.exit(1);
  }
  // Always our own copy: a PI_PACKAGE_DIR inherited from the user's setup (Nix, a pi from npm) has another
  // version's files in another layout.
  if (isCompiledBinary()) {
    delete process.env.PI_PACKAGE_DIR;
    const source = path.join(path.dirname(Bun.main), PI_ASSETS);
    let lastError: unknown;
    for (const dest of assetCacheDir(process.env, buildKey)) {
      try {
        process.env.PI_PACKAGE_DIR = materialize(source, dest());
        break;
      } catch (err) {
        lastError = err; // an unwritable cache: try the next place
      }
    }
    if (!process.env.PI_PACKAGE_DIR) {
      process.stderr.write(`subagents: cannot write pi's assets to a cache folder: ${(lastError as Error)?.message}\n`);
      process.exit(1);
    }
    redirectPhotonWasm(path.join(process.env.PI_PACKAGE_DIR, PHOTON_WASM));
    (globalThis as Record<symbol, unknown>)[Symbol.for(QUICKJS_KEY)] = path.join(
      process.env.PI_PACKAGE_DIR,
      QUICKJS_WASM,
    );
  }
  // From a source checkout, pi's bundle gets the executable's build-time hooks as it loads (same pi either way).
  else hookPiAtRuntime();
  await import("./pi-entry.ts");
}

function hookPiAtRuntime(): void {
  const found = emptyHookReport();
  Bun.plugin({
    name: "pi-bundle-hooks",
    setup(build) {
      build.onLoad({ filter: BUNDLE_FILE }, async ({ path: file }) => ({
        contents: hookPiSource(file, await Bun.file(file).text(), found),
        loader: "js",
      }));
    },
  });
}
