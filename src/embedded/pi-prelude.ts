// Runs before pi's modules evaluate (pi-entry.ts imports it first): publishes what the embedded pi picks up —
// our installed stub's built-in extension (no transpiling of the bundle per child), the child extension that
// pi's main() gets as an extension factory (the build rewrites pi's own `main(argv)` call to ask for it), and the
// maker of the validators pi would otherwise compile as it loads (lazy-validators.ts) and the memo of file
// revisions (revision-memo.ts).
import { restoreSandboxEnv } from "../../node_modules/@earendil-works/pi-coding-agent/dist/bun/restore-sandbox-env.js";
import childExtension from "../child-extension/extension.ts";
import { publishBuiltin, publishFactories } from "./builtin-extension.ts";
import { installLazyValidators, TYPEBOX_VALUE_KEY, VALIDATOR_KEY } from "./lazy-validators.ts";
import { installRevisionMemo, REVISION_MEMO_KEY } from "./revision-memo.ts";

restoreSandboxEnv();
publishBuiltin(async () => (await import("../pi/extension.ts")).default as (pi: unknown) => unknown);
publishFactories([childExtension]);
installLazyValidators(VALIDATOR_KEY, TYPEBOX_VALUE_KEY);
installRevisionMemo(REVISION_MEMO_KEY);
