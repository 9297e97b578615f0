// The version of the pi compiled into this executable (build.ts defines it); from source, the pi in node_modules.
import * as fs from "node:fs";
import * as path from "node:path";

declare const __SUBAGENTS_EMBEDDED_PI__: string | undefined;

function fromNodeModules(): string {
  try {
    const file = path.join(
      import.meta.dir,
      "..",
      "..",
      "node_modules",
      "@earendil-works",
      "pi-coding-agent",
      "package.json",
    );
    return (JSON.parse(fs.readFileSync(file, "utf8")) as { version: string }).version;
  } catch {
    return "";
  }
}

export const EMBEDDED_PI_VERSION: string =
  typeof __SUBAGENTS_EMBEDDED_PI__ === "string" ? __SUBAGENTS_EMBEDDED_PI__ : fromNodeModules();
