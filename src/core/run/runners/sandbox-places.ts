// What a sandboxed child must not see beyond its hidden home (sandbox.ts), asked of this machine at each start:
//  - the system places where Unix sockets live: /run (and /var/run when it is not the same folder; /run/user/<uid>
//    is in it: the user's systemd manager, D-Bus, gpg and ssh agents, a rootless Docker) and /var/tmp. A network
//    namespace closes TCP, not connect() on a socket file, and a read-only mount does not stop it either: each
//    becomes an empty private folder. What stays: /run's own symlinks, made again inside (they lead elsewhere:
//    /run/shm, NixOS's /run/current-system), and the resolver's file when /etc/resolv.conf points into /run. A
//    socket the person wants reachable comes back through subagents.sandboxReadable, which is bound after;
//  - our records when they are kept outside those places (SUBAGENTS_DB in a folder of its own): the owner records
//    and control sockets (`control/`), logs, other tasks' worktrees and the store itself.
import type { Host } from "../../host.ts";
import { storeFileOf } from "../../store/store-types.ts";
import { dirOf, type HiddenPlaces, type RecordMasks, under } from "./sandbox.ts";

const SOCKET_PLACES = ["/run", "/var/run", "/var/tmp"];

export function hiddenPlaces(host: Pick<Host, "stat" | "listDir" | "readLink" | "realpath">): HiddenPlaces {
  const out: HiddenPlaces = { dirs: [], links: [], files: [] };
  for (const place of SOCKET_PLACES) {
    const real = host.realpath(place);
    if (!real || real === "/tmp" || out.dirs.includes(real) || !host.stat(real)?.isDirectory) continue;
    out.dirs.push(real);
    for (const e of real === "/var/tmp" ? [] : host.listDir(real)) {
      if (!e.isSymlink) continue;
      const target = host.readLink(`${real}/${e.name}`);
      if (target) out.links.push({ path: `${real}/${e.name}`, target });
    }
  }
  const resolv = host.realpath("/etc/resolv.conf");
  if (resolv && out.dirs.some((d) => under(resolv, d)) && host.stat(resolv)?.isFile) out.files.push(resolv);
  return out;
}

/** Where our records are: beside the store. */
export function dataDirOf(env: Record<string, string | undefined>, agentDir: string): string {
  return dirOf(storeFileOf(env, agentDir));
}

/** Our records beside the store: other tasks' worktrees, the owner records and control sockets and the logs, and the
 *  database with the files SQLite keeps beside it. */
function ourRecords(env: Record<string, string | undefined>, agentDir: string) {
  const data = dataDirOf(env, agentDir);
  const db = storeFileOf(env, agentDir);
  return {
    worktrees: `${data}/worktrees`,
    dirs: [`${data}/control`, `${data}/logs`],
    files: [db, `${db}-wal`, `${db}-shm`, `${db}-journal`],
  };
}

/** Every record of ours beside the store, whether it exists or not (sandbox-exec denies them by path). */
export function recordPaths(env: Record<string, string | undefined>, agentDir: string): string[] {
  const r = ourRecords(env, agentDir);
  return [...r.dirs, r.worktrees, ...r.files];
}

/**
 * Our records that the hidden places do not cover, or that a folder bound for the child would show again. `hidden`:
 * the folders the child sees empty (home, /tmp, the agent dir, hiddenPlaces); `bound`: what is bound into it.
 */
export function recordMasks(
  host: Pick<Host, "stat">,
  o: { env: Record<string, string | undefined>; agentDir: string; hidden: string[]; bound: string[] },
): RecordMasks {
  const records = ourRecords(o.env, o.agentDir);
  const shown = (p: string) => !o.hidden.some((h) => under(p, h)) || o.bound.some((b) => under(p, b));
  // A mask never covers a folder bound for the child (its task folder inside the data dir, say).
  const maskable = (p: string) => !!host.stat(p) && shown(p) && !o.bound.some((b) => under(b, p));
  return {
    before: [records.worktrees].filter((p) => host.stat(p)?.isDirectory && shown(p)),
    after: [
      ...records.dirs.filter(maskable).map((path) => ({ path, dir: true })),
      ...records.files.filter((p) => maskable(p) && host.stat(p)?.isFile).map((path) => ({ path, dir: false })),
    ],
  };
}
