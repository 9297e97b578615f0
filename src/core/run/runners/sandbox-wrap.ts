// Wraps a child's command in the sandbox of this platform: bubblewrap on Linux (sandbox.ts), sandbox-exec on
// macOS (a profile written to the same effect; untested here: no macOS machine). Shared by the local and slurm
// runners; the docker runner builds its own confinement from docker's flags.
import { agentDirHidden, bwrapArgv, hiddenArgvPaths, unconfinable } from "./sandbox.ts";
import { onPath } from "./commands.ts";
import { closeNetwork } from "./network.ts";
import { childFiles, type ChildFiles } from "./child-files.ts";
import { hiddenPlaces, recordMasks, recordPaths } from "./sandbox-places.ts";
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

const platform = () => (typeof process !== "undefined" ? process.platform : "linux");

/** The folders a confined child may write, where it sees them: its task's own tree, a layer over its folder or a
 *  copy of it (never the user's folder itself: what it writes comes back only through its owner's harvest). */
export const writableOf = (req: PlaceRequest) => req.tree?.writable.map((w) => w.path) ?? [];

/** A copy shown at the folder's own path: bound from the copy. */
export const mappedOf = (req: PlaceRequest) =>
  (req.tree?.writable ?? []).flatMap((w) => (w.from && w.from !== w.path ? [{ from: w.from, to: w.path }] : []));

/** A confined child runs in its task's own tree only (the task's isolate stage makes it). */
export const NO_TREE =
  "A confined child runs only in a layer or a copy of its folder, and none was made for it. Nothing was run.";

/** The call refuses such a folder before anything starts (core/call/folders.ts); the boundary holds by itself too,
 *  by real paths, for the sandbox and the docker runner. */
export function folderNotConfinable(req: Pick<PlaceRequest, "host" | "cwd" | "agentDir">, home: string): string | null {
  const real = (p: string) => req.host.realpath(p) ?? p;
  const unsafe = unconfinable(real(req.cwd), real(home), real(req.agentDir));
  return unsafe
    ? `A confined child cannot run in ${req.cwd}: it is ${unsafe}, which the child could write as a whole. Nothing was run.`
    : null;
}

const expandHome = (p: string, home: string) => (p.startsWith("~/") ? `${home}${p.slice(1)}` : p);

/** The command, sandboxed, with what it protects; a string is why it cannot be. */
export function sandboxed(
  req: PlaceRequest,
  opts: { checkInstalled?: boolean; netSocket?: string; files?: Pick<ChildFiles, "sessionFile" | "auth"> } = {},
): { argv: string[] } | string {
  const home = req.env.HOME ?? req.host.homedir();
  const unsafe = folderNotConfinable(req, home);
  if (unsafe) return unsafe;
  if (!req.tree) return NO_TREE;
  const writable = writableOf(req);
  const sessionFile = opts.files?.sessionFile ?? req.sessionFile;
  const extra = req.settings.sandboxReadable.map((p) => expandHome(p, home));
  const hidden = platform() === "darwin" ? { dirs: [], links: [], files: [] } : hiddenPlaces(req.host);
  const hiddenRoots = [home, "/tmp", req.agentDir, ...hidden.dirs];
  const readable = [
    ...hiddenArgvPaths(req.argv, hiddenRoots),
    ...req.files,
    ...assetCaches(req.env, home),
    ...extra,
    ...(req.tree?.readable ?? []),
  ];
  if (platform() !== "darwin" && opts.checkInstalled !== false && !onPath(req.host, "bwrap")) return BWRAP_MISSING;
  if (platform() === "darwin")
    return {
      argv: [
        "sandbox-exec",
        "-p",
        // sandbox-exec cannot show a copy at another path: the copy is what the child may write (its folder's own
        // path stays read-only to it there).
        seatbeltProfile(
          home,
          req.agentDir,
          [...(req.tree?.writable ?? []).map((w) => w.from ?? w.path), sessionFile],
          readable,
          [
            ...agentDirHidden(
              req.agentDir,
              req.host.listDir(req.agentDir).map((e) => e.name),
            ),
            ...recordPaths(req.host.env, req.agentDir),
          ],
        ),
        ...req.argv,
      ],
    };
  const ownConfig = (req.ownConfig ?? []).map((p) => expandHome(p, home));
  const argv = bwrapArgv({
    argv: req.argv,
    cwd: req.cwd,
    home,
    agentDir: req.agentDir,
    agentEntries: req.host.listDir(req.agentDir).map((e) => e.name),
    writable: writable.filter((w) => !mappedOf(req).some((m) => m.to === w)),
    mapped: mappedOf(req),
    sessionFile,
    auth: opts.files?.auth && ("file" in opts.files.auth ? { file: opts.files.auth.file } : { fd: 5 }),
    readable,
    ownConfig,
    netSocket: opts.netSocket,
    hidden,
    masks: recordMasks(req.host, {
      env: req.host.env,
      agentDir: req.agentDir,
      hidden: hiddenRoots,
      bound: [...writable, sessionFile, ...readable, ...ownConfig],
    }),
  });
  return { argv };
}

/** The sandboxed command with its network closed as the settings say (network.ts), its own session file and
 *  credentials copy (child-files.ts): the proxy and the copy's watch are started here and stopped by the returned
 *  cleanup; a string is why it cannot run (nothing is left running then). */
export async function sandboxedChild(
  req: PlaceRequest,
  o: { inline?: boolean } = {},
): Promise<
  (Required<Pick<Placed, "argv" | "env" | "cleanup">> & Pick<Placed, "netRefused" | "warnings" | "fd5">) | string
> {
  // sandbox-exec's network rules are not built (no macOS machine to test them): the host network there.
  const net = platform() === "darwin" ? null : await closeNetwork(req, req.argv, req.env);
  if (typeof net === "string") return net;
  // On this machine the child's auth.json goes through a pipe (no file); a Slurm step gets no extra descriptor.
  const files = await childFiles(req, { inline: o.inline && platform() !== "darwin" });
  const cleanup = async () => {
    await net?.proxy.close();
    await files.close();
  };
  const boxed = sandboxed(net ? { ...req, argv: net.argv } : req, { netSocket: net?.socket, files });
  if (typeof boxed === "string") {
    await cleanup();
    return boxed;
  }
  return {
    argv: boxed.argv,
    env: net?.env ?? req.env,
    cleanup,
    netRefused: net ? () => net.proxy.refused() : undefined,
    warnings: files.warnings,
    ...(files.auth && "data" in files.auth ? { fd5: files.auth.data } : {}),
  };
}

const q = (p: string) => JSON.stringify(p);

/** macOS: writes only in the task's folders and temp, nothing of home but pi's agent dir (read-only). */
export function seatbeltProfile(
  home: string,
  agentDir: string,
  writable: string[],
  readable: string[] = [],
  hidden: string[] = [],
): string {
  return [
    "(version 1)",
    "(allow default)",
    "(deny file-write*)",
    `(allow file-write* ${[...writable, "/private/tmp", "/private/var/folders", "/dev"].map((p) => `(subpath ${q(p)})`).join(" ")})`,
    `(deny file-read* (subpath ${q(home)}))`,
    `(allow file-read* ${[agentDir, ...writable, ...readable].map((p) => `(subpath ${q(p)})`).join(" ")})`,
    // Our records and the other sessions, read or written: denied again, then the child's own session file.
    ...(hidden.length
      ? [
          `(deny file-read* file-write* ${hidden.map((p) => `(subpath ${q(p)})`).join(" ")})`,
          `(allow file-read* file-write* ${writable.map((p) => `(subpath ${q(p)})`).join(" ")})`,
        ]
      : []),
  ].join("\n");
}
