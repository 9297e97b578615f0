// The folders an MCP client gives as roots: with the client's working directory they decide where a call's tasks
// run (docs/mcp.md "Where tasks run"). Asked for with an `input_required` round when the client declares roots.
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import type { ToolContext } from "./protocol/session.ts";
import { type InputRequired, inputRequired, listRoots } from "./protocol/wire.ts";

const ROOTS_KEY = "roots";

/** The client's root folders, or an `input_required` result asking for them first when it declares roots and has
 * not answered yet. `null`: the client gave none (no roots capability, or an empty or unreadable list). */
export function clientRoots(ctx: ToolContext): { roots: string[] | null } | { ask: InputRequired } {
  if (!ctx.caps.roots) return { roots: null };
  const response = ctx.inputResponses[ROOTS_KEY] as { roots?: { uri?: unknown }[] } | undefined;
  if (!response) return { ask: inputRequired({ [ROOTS_KEY]: listRoots() }) };
  const dirs: string[] = [];
  for (const r of response.roots ?? []) {
    if (typeof r?.uri !== "string" || !r.uri.startsWith("file://")) continue;
    try {
      dirs.push(path.resolve(fileURLToPath(r.uri)));
    } catch {
      // not a local path (another host's file URI): no folder of this machine
    }
  }
  return { roots: dirs.length ? dirs : null };
}

const inside = (dir: string, root: string) => {
  const rel = path.relative(root, dir);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
};

/** Where a call's tasks run unless they say otherwise: the server's folder (the client's working directory), or
 * the first root when that folder is outside every root. */
export function callCwd(serverCwd: string, roots: string[] | null): string {
  if (!roots || roots.some((r) => inside(serverCwd, r))) return serverCwd;
  return roots[0];
}
