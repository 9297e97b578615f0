// Under Bun, a child need not load pi's HTTP client. pi (≥ 1.x) evaluates its bundled undici as soon as its main
// chunk loads and, at start, swaps in undici's JS fetch with an EnvHttpProxyAgent whose only settings a child can
// tell apart from Bun's native fetch are the proxy variables and the idle timeout (pi's default: 5 minutes between
// bytes, which is also Bun's fetch default). So when neither is in play, the embedded pi keeps Bun's native fetch
// and never evaluates undici: ~25 ms less CPU per child for the module, and the request goes through native code.
// Any proxy variable (undici reads exactly these six) or another idle timeout: pi's own setup, unchanged.
// pi configures its dispatcher more than once at start (with its default first, then with the settings' timeout,
// after extensions have loaded — and our child extension wraps fetch to watch rate limits). So the choice is made
// once, from the start: a settings file that names an idle timeout or a proxy means pi's setup from its first call,
// exactly as without us (undici's fetch under any wrapper, with the user's timeout).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** The global the hooked `configureHttpDispatcher` asks; set only by the pi role (always Bun). */
export const NATIVE_FETCH_KEY = "subagents.native-fetch";

const PROXY_VARS = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"];

/** True when pi's dispatcher would behave like Bun's fetch: no proxy, pi's default timeout, pi never swapped fetch. */
export function keepNativeFetch(
  env: Record<string, string | undefined>,
  timeoutMs: number,
  defaultMs: number,
  untouched: boolean,
): boolean {
  return untouched && timeoutMs === defaultMs && !PROXY_VARS.some((v) => env[v] && !ourProxy(env, v));
}

/** A proxy variable the sandbox's network forwarder set (src/host/net-forward.ts): Bun's native fetch honours
 *  HTTP(S)_PROXY the way undici's EnvHttpProxyAgent does, and there is no NO_PROXY, so pi's setup would change nothing. */
const ourProxy = (env: Record<string, string | undefined>, v: string) =>
  !!env.SUBAGENTS_NET_PROXY && env[v] === env.SUBAGENTS_NET_PROXY;

/** Whether pi's settings (global, and the project's in `cwd`) may set the idle timeout or a proxy. */
export function settingsMayChangeFetch(env: Record<string, string | undefined>, cwd: string): boolean {
  const dir = env.PI_CODING_AGENT_DIR;
  const agentDir = dir ? dir.replace(/^~(?=$|\/)/, os.homedir()) : path.join(os.homedir(), ".pi", "agent");
  return [path.join(agentDir, "settings.json"), path.join(cwd, ".pi", "settings.json")].some((file) => {
    try {
      return /"(httpIdleTimeoutMs|httpProxy)"/.test(fs.readFileSync(file, "utf8"));
    } catch {
      return false;
    }
  });
}

/** The same offer as plain JS, for the user's pi compiled once by us (src/cli/commands/compile-pi.ts). */
export function nativeFetchOfferJs(): string {
  // Plain JS (the prelude is not bundled with this file): the same two checks as above.
  return `{
  const { readFileSync } = require("node:fs");
  const { homedir } = require("node:os");
  const { join } = require("node:path");
  const proxyVars = ${JSON.stringify(PROXY_VARS)};
  let fromSettings;
  const settingsMayChangeFetch = () => {
    const dir = process.env.PI_CODING_AGENT_DIR;
    const agentDir = dir ? dir.replace(/^~(?=$|\\/)/, homedir()) : join(homedir(), ".pi", "agent");
    return [join(agentDir, "settings.json"), join(process.cwd(), ".pi", "settings.json")].some((file) => {
      try { return /"(httpIdleTimeoutMs|httpProxy)"/.test(readFileSync(file, "utf8")); } catch { return false; }
    });
  };
  globalThis[Symbol.for(${JSON.stringify(NATIVE_FETCH_KEY)})] = (timeoutMs, defaultMs, untouched) =>
    untouched && timeoutMs === defaultMs && !proxyVars.some((v) => process.env[v] && process.env[v] !== process.env.SUBAGENTS_NET_PROXY) && !(fromSettings ??= settingsMayChangeFetch());
}
`;
}

/** Lets the hooked pi ask `keepNativeFetch` (from the pi role, before pi's modules load). */
export function offerNativeFetch(): void {
  let fromSettings: boolean | undefined;
  (globalThis as Record<symbol, unknown>)[Symbol.for(NATIVE_FETCH_KEY)] = (
    timeoutMs: number,
    defaultMs: number,
    untouched: boolean,
  ) =>
    keepNativeFetch(process.env, timeoutMs, defaultMs, untouched) &&
    !(fromSettings ??= settingsMayChangeFetch(process.env, process.cwd()));
}

// The two places in pi's bundle (its main chunk): undici's eager evaluation, made lazy (only the dispatcher setup
// touches it), and the dispatcher setup, which first asks us.
const UNDICI_EAGER = /\bvar undici=(\w+)\(require_undici\(\),1\);/;
const DISPATCHER_SETUP =
  /function configureHttpDispatcher\((\w+)=(\w+)\)\{let (\w+)=parseHttpIdleTimeoutMs\(\1\);if\(\3===void 0\)throw new Error\([^;]*\);/;

/** Applies both changes to one source; returns null when this source has neither, throws when it has only one. */
export function hookNativeFetch(path: string, source: string): string | null {
  const eager = UNDICI_EAGER.exec(source);
  const setup = DISPATCHER_SETUP.exec(source);
  if (!eager && !setup) return null;
  if (!eager || !setup)
    throw new Error(
      `${path}: pi's undici setup changed shape (found ${eager ? "undici's load" : "configureHttpDispatcher"} only)`,
    );
  if (!/\boriginalGlobalFetch=globalThis\.fetch\b/.test(source) || !/\binstalledGlobalFetch\b/.test(source))
    throw new Error(`${path}: pi no longer records the fetch it swaps (originalGlobalFetch/installedGlobalFetch)`);
  const ask = `if(globalThis[Symbol.for(${JSON.stringify(NATIVE_FETCH_KEY)})]?.(${setup[3]},${setup[2]},installedGlobalFetch===void 0))return;`;
  return source
    .replace(
      UNDICI_EAGER,
      `var __subagentsUndici,undici=new Proxy({},{get:(_,k)=>(__subagentsUndici??=${eager[1]}(require_undici(),1))[k]});`,
    )
    .replace(DISPATCHER_SETUP, (all) => all + ask);
}
