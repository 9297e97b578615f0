// The folders an MCP client gives as roots: with the client's working directory they decide where a call's tasks
// run (docs/mcp.md "Where tasks run"). Asked for with an `input_required` round when the client declares roots,
// once per call: a client that declares roots and cannot give them (an error, no answer in time, a retry without
// them) falls back to the server's folder, and is not asked again on this connection.
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import type { ToolContext } from "./protocol/session.ts";
import { ROOTS_TIMEOUT_MS } from "./protocol/session.ts";
import { type InputRequest, listRoots } from "./protocol/wire.ts";

export const ROOTS_KEY = "roots";

/** The client's root folders, or the request asking for them first when it declares roots and has not been asked
 *  in this call (`asked`: the call's earlier round did ask). `null`: the client gave none (no roots capability, an
 *  empty list, or none it could give). */
export function clientRoots(
  ctx: ToolContext,
  asked: boolean,
): { roots: string[] | null } | { ask: Record<string, InputRequest> } {
  if (!ctx.caps.roots) return { roots: null };
  const response = ctx.inputResponses[ROOTS_KEY] as { roots?: unknown } | undefined;
  if (!response) {
    if (!asked) return { ask: { [ROOTS_KEY]: listRoots(ROOTS_TIMEOUT_MS) } };
    ctx.rootsUnreadable("the client did not answer roots/list");
    return { roots: null };
  }
  if (!Array.isArray(response.roots)) {
    ctx.rootsUnreadable("its answer to roots/list has no list of roots");
    return { roots: null };
  }
  const dirs: string[] = [];
  for (const r of response.roots as { uri?: unknown }[]) {
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
