// Wraps a child's command in the sandbox of this platform: bubblewrap on Linux (sandbox.ts), sandbox-exec on
// macOS (a profile written to the same effect; untested here: no macOS machine). Shared by the local and slurm
// runners; the docker runner builds its own confinement from docker's flags.
import { bwrapArgv, hiddenArgvPaths } from "./sandbox.ts";
import { onPath } from "./commands.ts";
import type { PlaceRequest } from "./types.ts";

export const BWRAP_MISSING =
  "The sandbox needs bubblewrap (bwrap), which is not installed here. Install the Debian/Ubuntu package `bubblewrap` (apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run without --sandbox / subagents.sandbox. Nothing was run.";

/** The embedded pi's assets, unpacked once per version under the cache folder (src/embedded/pi-assets.ts):
 *  read-only in the child, or it unpacks them again into its empty home on every start (~70 ms). */
export function assetCaches(env: Record<string, string | undefined>, home: string): string[] {
  return [env.XDG_CACHE_HOME, `${home}/.cache`].filter((b): b is string => !!b && b.startsWith("/")).map((b) => `${b}/subagents`);
}

const dirOf = (p: string) => p.slice(0, Math.max(1, p.lastIndexOf("/")));
const platform = () => (typeof process !== "undefined" ? process.platform : "linux");

/** The command, sandboxed; a string is why it cannot be. `bwrap` is the path to use when found elsewhere (srun). */
export function sandboxed(req: PlaceRequest, opts: { checkInstalled?: boolean } = {}): string[] | string {
  const home = req.env.HOME ?? req.host.homedir();
  const writable = [req.cwd, dirOf(req.sessionFile), ...(req.gitDir ? [req.gitDir] : [])];
  const extra = req.settings.sandboxReadable.map((p) => (p.startsWith("~/") ? `${home}${p.slice(1)}` : p));
  const readable = [...hiddenArgvPaths(req.argv, home), ...req.files, ...assetCaches(req.env, home), ...extra];
  if (platform() === "darwin") return ["sandbox-exec", "-p", seatbeltProfile(home, req.agentDir, writable, readable), ...req.argv];
  if (opts.checkInstalled !== false && !onPath(req.host, "bwrap")) return BWRAP_MISSING;
  const agentEntries = req.host.listDir(req.agentDir).map((e) => e.name);
  return bwrapArgv({ argv: req.argv, cwd: req.cwd, home, agentDir: req.agentDir, agentEntries, writable, readable, ownConfig: (req.ownConfig ?? []).map((p) => (p.startsWith("~/") ? `${home}${p.slice(1)}` : p)) });
}

const q = (p: string) => JSON.stringify(p);

/** macOS: writes only in the task's folders and temp, nothing of home but pi's agent dir (read-only). */
export function seatbeltProfile(home: string, agentDir: string, writable: string[], readable: string[] = []): string {
  return [
    "(version 1)",
    "(allow default)",
    "(deny file-write*)",
    `(allow file-write* ${[...writable, "/private/tmp", "/private/var/folders", "/dev"].map((p) => `(subpath ${q(p)})`).join(" ")})`,
    `(deny file-read* (subpath ${q(home)}))`,
    `(allow file-read* ${[agentDir, ...writable, ...readable].map((p) => `(subpath ${q(p)})`).join(" ")})`,
  ].join("\n");
}
