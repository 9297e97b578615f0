// Wraps a child's command in the sandbox of this platform: bubblewrap on Linux (sandbox.ts), sandbox-exec on
// macOS (a profile written to the same effect; untested here: no macOS machine). Shared by the local and slurm
// runners; the docker runner builds its own confinement from docker's flags.
import { bwrapArgv, hiddenArgvPaths } from "./sandbox.ts";
import { sandboxGuard, type SandboxGuard } from "./sandbox-guard.ts";
import { onPath } from "./commands.ts";
import { closeNetwork } from "./network.ts";
import type { Placed, PlaceRequest } from "./types.ts";

export const BWRAP_MISSING =
  "The sandbox needs bubblewrap (bwrap), which is not installed here. Install the Debian/Ubuntu package `bubblewrap` (apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run without --sandbox / subagents.sandbox. Nothing was run.";

/** The embedded pi's assets, unpacked once per version under the cache folder (src/embedded/pi-assets.ts):
 *  read-only in the child, or it unpacks them again into its empty home on every start (~70 ms). */
export function assetCaches(env: Record<string, string | undefined>, home: string): string[] {
  return [env.XDG_CACHE_HOME, `${home}/.cache`]
    .filter((b): b is string => !!b && b.startsWith("/"))
    .map((b) => `${b}/subagents`);
}

const dirOf = (p: string) => p.slice(0, Math.max(1, p.lastIndexOf("/")));
const platform = () => (typeof process !== "undefined" ? process.platform : "linux");

/** The protected paths of this child's writable folders (its task folder, its worktree's git folder). */
export function guardOf(req: PlaceRequest, home: string): SandboxGuard {
  const writable = [req.cwd, ...(req.gitDir ? [req.gitDir] : [])];
  return sandboxGuard(req.host, {
    roots: [req.cwd],
    writable,
    home,
    xdgConfig: req.env.XDG_CONFIG_HOME,
    open: req.settings.sandboxWritable,
    cwd: req.cwd,
  });
}

/** The command, sandboxed, with what it protects; a string is why it cannot be. */
export function sandboxed(
  req: PlaceRequest,
  opts: { checkInstalled?: boolean; netSocket?: string } = {},
): { argv: string[]; guard: SandboxGuard } | string {
  const home = req.env.HOME ?? req.host.homedir();
  const writable = [req.cwd, dirOf(req.sessionFile), ...(req.gitDir ? [req.gitDir] : [])];
  const extra = req.settings.sandboxReadable.map((p) => (p.startsWith("~/") ? `${home}${p.slice(1)}` : p));
  const readable = [...hiddenArgvPaths(req.argv, home), ...req.files, ...assetCaches(req.env, home), ...extra];
  if (platform() !== "darwin" && opts.checkInstalled !== false && !onPath(req.host, "bwrap")) return BWRAP_MISSING;
  const guard = guardOf(req, home);
  if (platform() === "darwin")
    return {
      argv: ["sandbox-exec", "-p", seatbeltProfile(home, req.agentDir, writable, readable, guard), ...req.argv],
      guard,
    };
  const agentEntries = req.host.listDir(req.agentDir).map((e) => e.name);
  const argv = bwrapArgv({
    argv: req.argv,
    cwd: req.cwd,
    home,
    agentDir: req.agentDir,
    agentEntries,
    writable,
    readable,
    ownConfig: (req.ownConfig ?? []).map((p) => (p.startsWith("~/") ? `${home}${p.slice(1)}` : p)),
    guard: guard.binds,
    netSocket: opts.netSocket,
  });
  return { argv, guard };
}

/** The sandboxed command with its network closed as the settings say (network.ts): the proxy is started here and
 *  stopped by the returned cleanup; a string is why it cannot run (nothing is left running then). */
export async function sandboxedChild(
  req: PlaceRequest,
): Promise<(Required<Pick<Placed, "argv" | "env">> & Pick<Placed, "guard" | "cleanup" | "netRefused">) | string> {
  // sandbox-exec's network rules are not built (no macOS machine to test them): the host network there.
  const net = platform() === "darwin" ? null : await closeNetwork(req, req.argv, req.env);
  if (typeof net === "string") return net;
  const boxed = sandboxed(net ? { ...req, argv: net.argv } : req, { netSocket: net?.socket });
  if (typeof boxed === "string") {
    await net?.proxy.close();
    return boxed;
  }
  if (!net) return { argv: boxed.argv, env: req.env, guard: boxed.guard };
  return {
    argv: boxed.argv,
    env: net.env,
    guard: boxed.guard,
    cleanup: () => net.proxy.close(),
    netRefused: () => net.proxy.refused(),
  };
}

const q = (p: string) => JSON.stringify(p);

/** macOS: writes only in the task's folders and temp, nothing of home but pi's agent dir (read-only). */
export function seatbeltProfile(
  home: string,
  agentDir: string,
  writable: string[],
  readable: string[] = [],
  guard?: SandboxGuard,
): string {
  // Later rules win: the protected paths are denied again after the writable folders are allowed (by path, so a
  // missing one needs no placeholder); what is writable inside them (worktree objects, agent memory) comes last.
  const denied = (guard?.binds ?? [])
    .filter((b) => b.how !== "rw")
    .map((b) => b.path)
    .concat(guard?.missing ?? []);
  const reopened = (guard?.binds ?? []).filter((b) => b.how === "rw").map((b) => b.path);
  return [
    "(version 1)",
    "(allow default)",
    "(deny file-write*)",
    `(allow file-write* ${[...writable, "/private/tmp", "/private/var/folders", "/dev"].map((p) => `(subpath ${q(p)})`).join(" ")})`,
    `(deny file-read* (subpath ${q(home)}))`,
    `(allow file-read* ${[agentDir, ...writable, ...readable].map((p) => `(subpath ${q(p)})`).join(" ")})`,
    ...(denied.length ? [`(deny file-write* ${denied.map((p) => `(subpath ${q(p)})`).join(" ")})`] : []),
    ...(reopened.length ? [`(allow file-write* ${reopened.map((p) => `(subpath ${q(p)})`).join(" ")})`] : []),
  ].join("\n");
}
