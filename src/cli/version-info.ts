// What `--version` and `doctor` say about this build: version, the pi inside, the commit it was built from.
import pkg from "../../package.json" with { type: "json" };
import { EMBEDDED_PI_VERSION } from "../host/embedded-version.ts";

declare const __SUBAGENTS_COMMIT__: string | undefined;

/** The commit build.ts compiled (with "-dirty" for uncommitted changes); "source" when run from a checkout. */
export const BUILD_COMMIT: string = typeof __SUBAGENTS_COMMIT__ === "string" ? __SUBAGENTS_COMMIT__ : "source";

/** `subagents 0.2.0 · pi 0.87.1 inside · commit 1a2b3c4d5e6f`. No network: update checks are the user's call. */
export function versionLine(): string {
  const pi = EMBEDDED_PI_VERSION ? ` · pi ${EMBEDDED_PI_VERSION} inside` : "";
  return `subagents ${pkg.version}${pi} · commit ${BUILD_COMMIT}`;
}
