// Where the child extension file is. From source it is src/child-extension/extension.ts; the compiled binary and the
// bundled pi extension carry its bundled text (injected at build time) and write it out once per version.
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { writeFileAtomic } from "./atomic-write.ts";

declare const __SUBAGENTS_CHILD_SOURCE__: string | undefined;

/** The bundled child extension's text (dist/child.js, or what the build put into this binary). */
export function childExtensionSource(): string {
  const source = embeddedSource();
  if (source !== undefined) return source;
  return fs.readFileSync(
    path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), "../../dist/child.js"),
    "utf8",
  );
}

function embeddedSource(): string | undefined {
  return typeof __SUBAGENTS_CHILD_SOURCE__ === "string" ? __SUBAGENTS_CHILD_SOURCE__ : undefined;
}

/** Kept apart from `<agentDir>/subagents/`, which is a profile folder. */
export const runtimeDir = (agentDir: string) => path.join(agentDir, "subagents-runtime");

export function childExtensionPath(cacheDir: string): string {
  const source = embeddedSource();
  if (source === undefined) {
    const fromSource = path.resolve(
      import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname),
      "../child-extension/extension.ts",
    );
    if (fs.existsSync(fromSource)) return fromSource;
    throw new Error(`child extension not found at ${fromSource} (run the build)`);
  }
  const hash = crypto.createHash("sha256").update(source).digest("hex").slice(0, 12);
  const file = path.join(cacheDir, `child-extension-${hash}.js`);
  if (!fs.existsSync(file)) writeFileAtomic(file, source);
  return file;
}
