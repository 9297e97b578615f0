// What the MCP client declared (per request on the 2026-07-28 revision, at `initialize` before it) and the folders
// it gave as roots: the client's working directory and roots decide where a call's tasks run (docs/mcp.md).
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { inputRequired, type ServerContext } from "@modelcontextprotocol/server";
import type { Refusal } from "../core/call/request.ts";

const CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";

export type ClientCaps = { elicitation: boolean; roots: boolean };

/** `initialized`: what the client declared at `initialize` (2025-era connections; undefined on later ones). */
export function clientCaps(ctx: ServerContext, initialized: Record<string, unknown> | undefined): ClientCaps {
  const perRequest = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CAPABILITIES_KEY];
  const caps = (perRequest ?? initialized ?? {}) as {
    elicitation?: { form?: unknown; url?: unknown };
    roots?: unknown;
  };
  // An elicitation capability that names modes must name the form mode; an empty one means forms (2025-06-18).
  const e = caps.elicitation;
  const forms = !!e && (e.form !== undefined || e.url === undefined);
  return { elicitation: forms, roots: !!caps.roots };
}

const ROOTS_KEY = "roots";

/** The client's root folders, or an `input_required` result asking for them first when it declares roots and has
 * not answered yet. `null`: the client gave none (no roots capability, or an empty or unreadable list). */
export function clientRoots(ctx: ServerContext, caps: ClientCaps): { roots: string[] | null } | { ask: unknown } {
  if (!caps.roots) return { roots: null };
  const response = ctx.mcpReq.inputResponses?.[ROOTS_KEY] as { roots?: { uri?: unknown }[] } | undefined;
  if (!response) return { ask: inputRequired({ inputRequests: { [ROOTS_KEY]: inputRequired.listRoots() } }) };
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

/** A task whose folder is outside every root the client gave is refused before anything starts. */
export function outsideRoots(
  tasks: { name: string; cwd?: string }[],
  cwd: string,
  roots: string[] | null,
): Refusal | null {
  if (!roots) return null;
  for (const t of tasks) {
    const dir = path.resolve(t.cwd ?? cwd);
    if (!roots.some((r) => inside(dir, r)))
      return {
        code: "INVALID_INPUT",
        message: `task "${t.name}": cwd ${dir} is outside the MCP client's roots (${roots.join(", ")}); use a folder inside one of them.`,
      };
  }
  return null;
}
