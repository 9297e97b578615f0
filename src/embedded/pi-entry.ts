// pi itself, as the compiled `subagents` runs it in its pi role: pi's self-contained bundle (dist/bundle), whose
// CLI runtime starts main() as soon as it loads. The build (scripts/executable.ts) rewrites that one call so
// main() gets our child extension as a factory, and hooks pi's extension loader; both fail the build if pi's
// shape changes. Imported only after pi-role.ts has prepared the environment: pi reads PI_PACKAGE_DIR while its
// modules load. No top-level await here: the entry compiles to bytecode.
import "./pi-prelude.ts";
import "../../node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli-runtime.js";
