// A task's folder as the kernel sees it. Every check, mask and mount names the folder by its real path, decided here
// once for every front (the CLI's --cwd, pi's and MCP's `cwd`, a resumed session's): a path written through a link
// (`proj/link` with `link -> ~`) is the folder the link leads to, and that is what is checked — against the MCP
// client's roots (their real paths too), and, for a confined task, against the places it may never be given whole.
import type { Engine } from "../run/engine.ts";
import { unconfinable, under } from "../run/runners/sandbox.ts";
import type { Refusal } from "./request.ts";

/** `cwd` by its real path; as written when it cannot be resolved (missing: the folder check says so). */
export const realFolder = (engine: Pick<Engine, "host">, cwd: string): string => engine.host.realpath(cwd) ?? cwd;

const invalid = (message: string): Refusal => ({ code: "INVALID_INPUT", message });

/** How a folder was written and where it really is, for a refusal. */
const named = (asked: string, real: string) => (asked === real ? real : `${asked} (really ${real})`);

/** The first task whose folder (its real path) lies in none of the MCP client's roots (their real paths), refused. */
export function outsideRoots(
  engine: Pick<Engine, "host">,
  tasks: { name: string; cwd: string; asked: string }[],
  roots: string[] | undefined,
): Refusal | null {
  if (!roots?.length) return null;
  const real = roots.map((r) => realFolder(engine, r));
  const out = tasks.find((t) => !real.some((r) => under(t.cwd, r)));
  return out
    ? invalid(
        `task "${out.name}": cwd ${named(out.asked, out.cwd)} is outside the MCP client's roots (${real.join(", ")}); use a folder inside one of them.`,
      )
    : null;
}

/**
 * Why a confined task (the sandbox, a container: its folder is writable as a whole) may not run in its folder, or
 * null: the home folder, a folder above it, or one holding pi's agent dir (credentials, the store, other runs'
 * control sockets).
 */
export function confinedFolderRefusal(
  engine: Pick<Engine, "host" | "agentDir">,
  task: { name: string; cwd: string; asked: string; confined?: boolean },
): Refusal | null {
  const { cwd, asked } = task;
  if (!task.confined) return null;
  const what = unconfinable(cwd, realFolder(engine, engine.host.homedir()), realFolder(engine, engine.agentDir));
  if (!what) return null;
  return invalid(
    `task "${task.name}": its folder ${named(asked, cwd)} is ${what}; a sandboxed or container task may write its whole folder, so it cannot run there: give it a project folder.`,
  );
}
