// The credentials a sandboxed or container child gets (docs/sandbox-runners.md "Credentials"). pi reads
// `<agentDir>/auth.json` and runs an API key written `!command` as a shell command; a child that could write the
// user's file could plant one for the user's next unsandboxed pi. So the child never sees that file, and nothing it
// writes ever comes back: it gets its own auth.json holding exactly the entry of the provider its model runs on (none
// when that provider cannot be told here), where a `!command` key is run here, once, as pi would run it, and written
// as the literal value it printed. A sign-in (OAuth) token goes without its refresh token — the child can neither
// refresh it (a provider that rotates refresh tokens would sign the user out) nor take away a long-lived credential —
// and a token that would expire within REFRESH_AHEAD_MS is refreshed first, here, by the user's own pi
// (`pi auth print-bearer-token --min-expiry`, which refreshes and stores it under pi's lock). The entry is handed to
// the sandbox through a pipe where the runner can (bubblewrap copies it into the sandbox: no file on disk), else as a
// 0600 file in the owner's private temp folder, removed when the child ends and never read back.
import type { Host } from "../../host.ts";
import { runCommand } from "./commands.ts";

type Entry = Record<string, unknown>;
type Entries = Record<string, Entry>;

/** A token that expires sooner than this is refreshed before the child starts: the child has at least this long. */
export const REFRESH_AHEAD_MS = 30 * 60_000;
const REFRESH_TIMEOUT_MS = 30_000;

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

/** A sign-in token as pi writes one: printable tokens (never a `!command`), a finite expiry. */
export function isSignInToken(e: unknown): e is Entry & { access: string; refresh: string; expires: number } {
  if (!isObject(e) || e.type !== "oauth") return false;
  const { access, refresh, expires } = e;
  return (
    typeof access === "string" &&
    typeof refresh === "string" &&
    TOKEN.test(access) &&
    !access.startsWith("!") &&
    typeof expires === "number" &&
    Number.isFinite(expires)
  );
}

/** The entry the child's copy holds for its provider, `!command` keys still to be run; none for another provider or
 *  when the provider is not known. A sign-in token without its refresh token. */
export function pickCredentials(all: Entries, provider: string | undefined): Entries {
  const e = provider ? all[provider] : undefined;
  if (!provider || !e) return {};
  if (isSignInToken(e)) return { [provider]: { ...e, refresh: "" } };
  if (e.type === "api_key" && (e.key === undefined || typeof e.key === "string")) return { [provider]: { ...e } };
  return {};
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

/** How the owner refreshes a sign-in token: the user's own pi, which stores the new one itself (under its lock). */
export type TokenRefresher = {
  /** The children's pi command, and its environment (its agent dir: the user's). */
  piCommand: string[];
  env: Record<string, string>;
  /** Whether that pi has `auth print-bearer-token --min-expiry` (0.83 and later). */
  available: boolean;
};

/** One refresh per provider at a time in this process: children starting together wait for the same one. */
const refreshing = new Map<string, Promise<void>>();

async function refreshAhead(host: Host, real: string, provider: string, by: TokenRefresher): Promise<void> {
  const key = `${real}\0${provider}`;
  let p = refreshing.get(key);
  if (!p) {
    const argv = [...by.piCommand, "auth", "print-bearer-token", "--provider", provider];
    // Its stdout is the token: never read, kept or shown (only the stored file is read afterwards).
    p = runCommand(host, [...argv, "--min-expiry", `${Math.ceil(REFRESH_AHEAD_MS / 60_000)}m`], {
      timeoutMs: REFRESH_TIMEOUT_MS,
      env: by.env,
    }).then(() => {});
    refreshing.set(key, p);
    void p.finally(() => refreshing.delete(key));
  }
  await p;
}

export type ChildAuth = {
  /** The entries as the child's auth.json text. */
  text: string;
  /** What the person should know (a token that could not be refreshed, a provider not known here). */
  warnings: string[];
};

/**
 * The child's credentials, or null when the user has no auth.json (pi then uses the key variables the child
 * inherits). `provider`: the provider of the model it runs, undefined when not known here (the copy holds nothing).
 */
export async function childAuth(
  host: Host,
  agentDir: string,
  provider: string | undefined,
  refresher?: TokenRefresher,
): Promise<ChildAuth | null> {
  const real = host.realpath(`${agentDir}/auth.json`);
  if (!real) return null;
  let all = parse(host.readText(real));
  const warnings: string[] = [];
  if (!provider) {
    if (Object.keys(all).length)
      warnings.push(
        "sandbox: the child's model provider is not known here, so its auth.json holds no credentials; name its model as provider/id",
      );
    return { text: "{}\n", warnings };
  }
  const expiring = (e: Entry | undefined) =>
    isSignInToken(e) && e.expires < host.now() + REFRESH_AHEAD_MS
      ? Math.round((e.expires - host.now()) / 60_000)
      : null;
  if (expiring(all[provider]) !== null && refresher?.available) {
    await refreshAhead(host, real, provider, refresher);
    all = parse(host.readText(real));
  }
  const left = expiring(all[provider]);
  if (left !== null)
    warnings.push(
      `sandbox: the sign-in token of ${provider} ${left > 0 ? `expires in ${left} min` : "has expired"} and could not be refreshed before the child started; the child cannot refresh it (log in again with \`pi auth login ${provider}\`)`,
    );
  const given = await resolveCommands(host, pickCredentials(all, provider));
  return { text: `${JSON.stringify(given, null, 2)}\n`, warnings };
}
