// Under Bun, a child need not load pi's HTTP client. pi (≥ 1.x) evaluates its bundled undici as soon as its main
// chunk loads and, at start, swaps in undici's JS fetch with an EnvHttpProxyAgent whose only settings a child can
// tell apart from Bun's native fetch are the proxy variables and the idle timeout (pi's default: 5 minutes between
// bytes, which is also Bun's fetch default). So when neither is in play, the embedded pi keeps Bun's native fetch
// and never evaluates undici: ~25 ms less CPU per child for the module, and the request goes through native code.
// Any proxy variable (undici reads exactly these six) or another idle timeout: pi's own setup, unchanged.

/** The global the hooked `configureHttpDispatcher` asks; set only by the pi role (always Bun). */
export const NATIVE_FETCH_KEY = "subagents.native-fetch";

const PROXY_VARS = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY"];

/** True when pi's dispatcher would behave like Bun's fetch: no proxy, pi's default timeout, fetch never swapped. */
export function keepNativeFetch(env: Record<string, string | undefined>, timeoutMs: number, defaultMs: number, untouched: boolean): boolean {
  return untouched && timeoutMs === defaultMs && !PROXY_VARS.some((v) => env[v]);
}

/** The same offer as plain JS, for the user's pi compiled once by us (src/cli/commands/compile-pi.ts). */
export function nativeFetchOfferJs(): string {
  return `globalThis[Symbol.for(${JSON.stringify(NATIVE_FETCH_KEY)})] = (timeoutMs, defaultMs, untouched) => untouched && timeoutMs === defaultMs && !${JSON.stringify(PROXY_VARS)}.some((v) => process.env[v]);\n`;
}

/** Lets the hooked pi ask `keepNativeFetch` (from the pi role, before pi's modules load). */
export function offerNativeFetch(): void {
  (globalThis as Record<symbol, unknown>)[Symbol.for(NATIVE_FETCH_KEY)] = (timeoutMs: number, defaultMs: number, untouched: boolean) =>
    keepNativeFetch(process.env, timeoutMs, defaultMs, untouched);
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
  if (!eager || !setup) throw new Error(`${path}: pi's undici setup changed shape (found ${eager ? "undici's load" : "configureHttpDispatcher"} only)`);
  if (!/\boriginalGlobalFetch=globalThis\.fetch\b/.test(source) || !/\binstalledGlobalFetch\b/.test(source)) throw new Error(`${path}: pi no longer records the fetch it swaps (originalGlobalFetch/installedGlobalFetch)`);
  const ask = `if(globalThis[Symbol.for(${JSON.stringify(NATIVE_FETCH_KEY)})]?.(${setup[3]},${setup[2]},installedGlobalFetch===void 0&&globalThis.fetch===originalGlobalFetch))return;`;
  return source
    .replace(UNDICI_EAGER, `var __subagentsUndici,undici=new Proxy({},{get:(_,k)=>(__subagentsUndici??=${eager[1]}(require_undici(),1))[k]});`)
    .replace(DISPATCHER_SETUP, (all) => all + ask);
}
