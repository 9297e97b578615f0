// The child's half of rate-limit handling. pi's own retry (2, 4, 8 s) does not read Retry-After, and a 429's
// headers never reach extension events, so we watch the responses pi's provider SDKs fetch: a 429/529 (or a
// 503 that names a delay) is reported on fd 3, and every model request waits in before_provider_request until
// the provider's delay — or a call-wide hold the owner sent over the control pipe — has passed. So pi's retry
// lands after the limit lifts instead of spending its attempts inside it.
import type { ChildEvent } from "../core/types.ts";

type Api = { on(event: string, handler: (event: any, ctx: any) => unknown): void };

/** The delay a response asks for, in ms (retry-after-ms, then retry-after in seconds or as a date). */
export function retryAfterMs(headers: { get(name: string): string | null }, now = Date.now()): number | undefined {
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get("retry-after");
  if (!raw) return undefined;
  const sec = Number.parseFloat(raw);
  if (Number.isFinite(sec)) return Math.max(0, sec * 1000);
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** Longest single wait we honour here: beyond it pi's own error handling (and the owner's fallback) decides. */
const MAX_HOLD_MS = 120_000;

export function watchRateLimits(pi: Api, emit: (ev: ChildEvent) => void): { hold(until: number): void } {
  let holdUntil = 0;
  const hold = (until: number) => {
    holdUntil = Math.max(holdUntil, Math.min(until, Date.now() + MAX_HOLD_MS));
  };
  const original = globalThis.fetch;
  if (typeof original === "function") {
    const watched = async (...args: Parameters<typeof fetch>) => {
      const res = await original(...args);
      if (res.status === 429 || res.status === 529 || res.status === 503) {
        const delay = retryAfterMs(res.headers);
        if (res.status !== 503 || delay !== undefined) {
          if (delay !== undefined) hold(Date.now() + delay);
          emit({
            type: "rate_limit",
            status: res.status,
            ...(delay !== undefined ? { retryAfterMs: Math.round(delay) } : {}),
          });
        }
      }
      return res;
    };
    globalThis.fetch = Object.assign(watched, original) as typeof fetch;
  }
  pi.on("before_provider_request", async (_e, ctx) => {
    const wait = holdUntil - Date.now();
    if (wait <= 0) return undefined;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, wait);
      ctx?.signal?.addEventListener?.(
        "abort",
        () => {
          clearTimeout(t);
          resolve();
        },
        { once: true },
      );
    });
    return undefined;
  });
  return { hold };
}
