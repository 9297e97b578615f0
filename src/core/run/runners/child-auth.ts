// The credentials a sandboxed or container child gets (docs/sandbox-runners.md "Credentials"). pi reads
// `<agentDir>/auth.json` and runs an API key written `!command` as a shell command; a child that could write the
// user's file could plant one for the user's next unsandboxed pi. So the child never sees that file: it gets a copy,
// 0600 in the owner's private temp folder, holding only its own provider's entry (every entry when the provider
// cannot be told), where a `!command` key is run here, once, as pi would run it, and written as the literal value
// it printed. pi refreshes a sign-in (OAuth) token in place and providers rotate refresh tokens, so while the child
// runs the owner watches both files: a refreshed token of the child's provider comes back into the user's file
// (under pi's lock, only a well-formed token over one the file already has, never an API key or anything else),
// and a token the user's file got meanwhile goes into the copy. The copy goes when the child ends.
import type { Host } from "../../host.ts";
import { runCommand } from "./commands.ts";

type Entry = Record<string, unknown>;
type Entries = Record<string, Entry>;

/** How often the owner looks at the copy and the user's file while the child runs. */
const SYNC_MS = 1000;
/** pi refreshes a token that expires within 5 minutes: one this close is refreshed by the first child. */
const REFRESH_AHEAD_MS = 10 * 60_000;
/** How long a child waits for a sibling's refresh before it starts with the token as it is. */
const GATE_MS = 30_000;
const LOCK_STALE_MS = 30_000;

const isObject = (v: unknown): v is Entry => typeof v === "object" && v !== null && !Array.isArray(v);
const TOKEN = /^[\x21-\x7e]{1,16384}$/;

function parse(text: string | null): Entries {
  try {
    const v = JSON.parse(text ?? "") as unknown;
    if (!isObject(v)) return {};
    return Object.fromEntries(Object.entries(v).filter(([, e]) => isObject(e))) as Entries;
  } catch {
    return {};
  }
}

/** A value pi takes literally: `$` and a leading `!` escaped in pi's template syntax (`$$`, `$!`). */
export function literalKey(value: string): string {
  const escaped = value.replace(/\$/g, "$$$$");
  return escaped.startsWith("!") ? `$${escaped}` : escaped;
}

/** A refreshed sign-in token as pi writes one: printable tokens (never a `!command`), a finite expiry. */
export function isRefreshedToken(e: unknown): e is Entry & { access: string; refresh: string; expires: number } {
  if (!isObject(e) || e.type !== "oauth") return false;
  const { access, refresh, expires } = e;
  return (
    typeof access === "string" &&
    typeof refresh === "string" &&
    TOKEN.test(access) &&
    TOKEN.test(refresh) &&
    !access.startsWith("!") &&
    !refresh.startsWith("!") &&
    typeof expires === "number" &&
    Number.isFinite(expires)
  );
}

/**
 * The user's entry with the child's refreshed token in it, or null when it does not come back: the user's entry
 * must be a sign-in token already (an API key is never replaced), the child's well-formed, and newer. Only the
 * token's three fields are taken; the rest of the entry stays the user's.
 */
export function broughtBack(user: unknown, child: unknown): Entry | null {
  if (!isRefreshedToken(child) || !isObject(user) || user.type !== "oauth") return null;
  if (typeof user.expires === "number" && child.expires <= user.expires) return null;
  if (child.access === user.access && child.refresh === user.refresh) return null;
  return { ...user, access: child.access, refresh: child.refresh, expires: child.expires };
}

/** The entries the child's copy holds: its provider's (all when not known); `!command` keys still to be run. */
export function pickCredentials(all: Entries, provider: string | undefined): Entries {
  const names = provider ? [provider] : Object.keys(all);
  const out: Entries = {};
  for (const n of names) {
    const e = all[n];
    if (!e) continue;
    if (e.type === "oauth" && isRefreshedToken(e)) out[n] = { ...e };
    else if (e.type === "api_key" && (e.key === undefined || typeof e.key === "string")) out[n] = { ...e };
  }
  return out;
}

const commandCache = new Map<string, Promise<string | null>>();

/** What a `!command` key prints, run as pi runs it (a shell, 10 s, the output trimmed); once per owner process. */
function runKeyCommand(host: Host, command: string): Promise<string | null> {
  let p = commandCache.get(command);
  if (!p) {
    p = runCommand(host, ["/bin/sh", "-c", command.slice(1)], { timeoutMs: 10_000 }).then((r) =>
      r.code === 0 && r.stdout.trim() ? r.stdout.trim() : null,
    );
    commandCache.set(command, p);
  }
  return p;
}

/** Runs each `!command` key here; an entry whose command fails is left out (pi then says the key is missing). */
async function resolveCommands(host: Host, entries: Entries): Promise<Entries> {
  for (const [n, e] of Object.entries(entries)) {
    if (e.type !== "api_key" || typeof e.key !== "string" || !e.key.startsWith("!")) continue;
    const value = await runKeyCommand(host, e.key);
    if (value === null) delete entries[n];
    else entries[n] = { ...e, key: literalKey(value) };
  }
  return entries;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref?.());

/** Takes pi's lock on the user's auth.json (proper-lockfile's `<file>.lock` folder), runs fn, lets go. */
async function withAuthLock(host: Host, file: string, fn: () => void): Promise<boolean> {
  const lock = `${file}.lock`;
  for (let i = 0; i < 150; i++) {
    if (host.createDir(lock)) {
      try {
        fn();
        return true;
      } finally {
        host.remove(lock);
      }
    }
    const st = host.stat(lock);
    if (st && host.now() - st.mtimeMs > LOCK_STALE_MS) host.remove(lock);
    else await sleep(20);
  }
  return false;
}

/** A child starting with a token about to expire waits for a sibling that is refreshing it (one refresh, not N). */
const gates = new Map<string, Promise<void>>();

export type ChildAuth = {
  /** The copy, bound as the agent dir's auth.json. */
  file: string;
  /** What became of the child's changes to its copy, for the task's warnings. */
  warnings(): string[];
  /** Last look at both files, then the copy goes. Never throws. */
  close(): Promise<void>;
};

export async function childAuth(
  host: Host,
  agentDir: string,
  provider: string | undefined,
  name: string,
): Promise<ChildAuth | null> {
  const real = host.realpath(`${agentDir}/auth.json`);
  if (!real) return null;
  let all = parse(host.readText(real));
  const expiring = Object.keys(pickCredentials(all, provider)).filter((n) => {
    const e = all[n];
    return e.type === "oauth" && typeof e.expires === "number" && e.expires < host.now() + REFRESH_AHEAD_MS;
  });
  const waited = expiring.map((n) => gates.get(`${real}\0${n}`)).filter((g): g is Promise<void> => !!g);
  if (waited.length) {
    await Promise.race([Promise.all(waited), sleep(GATE_MS)]);
    all = parse(host.readText(real));
  }
  let open: (() => void)[] = [];
  for (const n of expiring) {
    const key = `${real}\0${n}`;
    if (gates.has(key)) continue;
    let done!: () => void;
    const gate = new Promise<void>((r) => (done = r));
    gates.set(key, gate);
    const release = () => {
      if (gates.get(key) === gate) gates.delete(key);
      done();
    };
    open.push(release);
    setTimeout(release, GATE_MS).unref?.();
  }
  const given = await resolveCommands(host, pickCredentials(all, provider));
  const file = `${host.privateTempDir()}/auth-${name}.json`;
  host.writeFile(file, `${JSON.stringify(given, null, 2)}\n`, 0o600);
  const sync = authSync(host, real, file, given, () => {
    for (const o of open) o();
    open = [];
  });
  const timer = setInterval(() => void sync.tick(), SYNC_MS);
  timer.unref?.();
  return {
    file,
    warnings: sync.warnings,
    close: async () => {
      clearInterval(timer);
      await sync.tick().catch(() => {});
      for (const o of open) o();
      host.remove(file);
    },
  };
}

/** The two-way watch of the copy and the user's file (see the top of this file). */
function authSync(host: Host, real: string, file: string, given: Entries, refreshed: () => void) {
  const oauth = Object.keys(given).filter((n) => given[n].type === "oauth");
  let copySeen = host.readText(file);
  let realSeen = host.readText(real);
  let busy: Promise<void> | null = null;
  const ignored = new Set<string>();
  /** Refreshed tokens read from the copy, still to be brought back. */
  const pending = new Map<string, Entry>();
  /** What the child changed in its copy since the last look (synchronous: the warnings need it at once). */
  const inspect = () => {
    const text = host.readText(file);
    if (text === null || text === copySeen) return;
    copySeen = text;
    const copy = parse(text);
    for (const n of Object.keys(copy)) {
      if (JSON.stringify(copy[n]) === JSON.stringify(given[n])) continue;
      if (oauth.includes(n) && isRefreshedToken(copy[n])) pending.set(n, copy[n]);
      else ignored.add(n);
    }
  };
  const bringBack = async () => {
    for (const [n, token] of pending) {
      pending.delete(n);
      given[n] = token;
      let back = false;
      await withAuthLock(host, real, () => {
        const user = parse(host.readText(real));
        const merged = broughtBack(user[n], token);
        if (!merged) return;
        host.writeFile(real, JSON.stringify({ ...user, [n]: merged }, null, 2));
        back = true;
      });
      if (back) refreshed();
    }
    realSeen = host.readText(real);
  };
  /** A token the user's file got meanwhile (the user's pi, a sibling's refresh) goes into the copy. */
  const bringIn = () => {
    const realText = host.readText(real);
    if (realText === null || realText === realSeen) return;
    realSeen = realText;
    const user = parse(realText);
    const copy = parse(host.readText(file));
    let changed = false;
    for (const n of oauth) {
      const newer = broughtBack(copy[n], user[n]);
      if (!newer) continue;
      copy[n] = newer;
      given[n] = newer;
      changed = true;
    }
    if (!changed) return;
    const text = `${JSON.stringify(copy, null, 2)}\n`;
    host.writeFile(file, text);
    copySeen = text;
  };
  const once = async () => {
    inspect();
    if (pending.size) await bringBack();
    bringIn();
  };
  return {
    tick: () => (busy ??= once().finally(() => (busy = null))),
    warnings: () => {
      inspect();
      return ignored.size
        ? [
            `sandbox: the child changed ${[...ignored].join(", ")} in its copy of auth.json: not kept (only a refreshed sign-in token comes back)`,
          ]
        : [];
    },
  };
}
