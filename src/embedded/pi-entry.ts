// pi itself, as the compiled `subagents` runs it in its pi role (what pi's own dist/bun/cli.js does, without
// top-level await so that it compiles to bytecode), with our child extension built in instead of loaded by -e.
// Imported only after pi-role.ts has prepared the environment: pi reads PI_PACKAGE_DIR while its modules load.
import "../../node_modules/pi-coding-agent-0.87/dist/bun/sandbox-env-setup.js";
import "../../node_modules/pi-coding-agent-0.87/dist/bun/runtime-setup.js";
import { setupCli } from "../../node_modules/pi-coding-agent-0.87/dist/cli/setup.js";
import { main } from "../../node_modules/pi-coding-agent-0.87/dist/main.js";
import childExtension from "../child/extension.ts";
import { publishBuiltin } from "./builtin-extension.ts";

// The installed stub (<agentDir>/extensions/subagents.js) picks this up: no transpiling of the bundle per child.
publishBuiltin(async () => (await import("../pi/extension.ts")).default as (pi: unknown) => unknown);
setupCli();
void main(process.argv.slice(2), { extensionFactories: [childExtension as never] });
