// pi's codemode worker, compiled into our executable as an extra entrypoint (scripts/executable.ts). A compiled
// pi starts its codemode sandbox with `new Worker("./src/extensions/codemode/worker.ts")` — the path of this
// file in pi's own repository — so it lives at the same path here; it is pi's bundled worker, unchanged.
import "../../../node_modules/@earendil-works/pi-coding-agent/dist/bundle/chunks/codemode-worker.js";
