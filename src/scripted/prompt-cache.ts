// Prompt caching as providers bill it, for the scripted model server: a request that repeats the beginning of an
// earlier request byte for byte pays the cache price for that part. Providers read a request in the order tools →
// system prompt → messages, so the prefix is taken over that order (not over the JSON body, whose key order is
// the client's business). Entries live `ttlMs` after their last use (5 minutes, like the default of the OpenAI and
// Anthropic caches); tokens are estimated at 4 characters each, as for the rest of the server's usage.
export type CacheableRequest = {
  tools?: unknown[];
  messages?: { role: string; content?: unknown }[];
};

export type PromptCacheOptions = { ttlMs?: number; maxEntries?: number };

export const CHARS_PER_TOKEN = 4;
const DEFAULT_TTL_MS = 5 * 60_000;
const DEFAULT_MAX_ENTRIES = 512;

/** JSON with object keys sorted: two requests that say the same thing serialize the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const isSystem = (m: { role: string }) => m.role === "system" || m.role === "developer";

/** The request as a provider's cache sees it: tools, then the system prompt, then the other messages, in order. */
export function cacheText(req: CacheableRequest): string {
  const messages = req.messages ?? [];
  return [
    canonical(req.tools ?? []),
    canonical(messages.filter(isSystem).map((m) => m.content)),
    ...messages.filter((m) => !isSystem(m)).map(canonical),
  ].join("\n");
}

/** Length of the common beginning of two strings (compared in blocks first: prompts run to hundreds of KB). */
export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  const BLOCK = 1024;
  while (i + BLOCK <= n && a.slice(i, i + BLOCK) === b.slice(i, i + BLOCK)) i += BLOCK;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

export type PromptCache = {
  /** Characters of `text` that repeat a kept prefix (the longest); keeps `text` for later requests. */
  read(text: string, now?: number): number;
  clear(): void;
  readonly size: number;
};

export function createPromptCache(opts: PromptCacheOptions = {}): PromptCache {
  const ttl = opts.ttlMs ?? DEFAULT_TTL_MS;
  const max = opts.maxEntries ?? DEFAULT_MAX_ENTRIES;
  // Most recent last. A request that extends a kept one replaces it: its prefixes are all still readable.
  let entries: { text: string; usedAt: number }[] = [];
  return {
    read(text, now = Date.now()) {
      entries = entries.filter((e) => now - e.usedAt < ttl);
      let best = 0;
      let bestEntry: (typeof entries)[number] | undefined;
      for (const e of entries) {
        const n = commonPrefix(text, e.text);
        if (n > best) [best, bestEntry] = [n, e];
      }
      // A read refreshes the entry's lifetime, as providers do.
      if (bestEntry) bestEntry.usedAt = now;
      entries = entries.filter((e) => !text.startsWith(e.text));
      entries.push({ text, usedAt: now });
      if (entries.length > max) entries = entries.slice(entries.length - max);
      return best;
    },
    clear() {
      entries = [];
    },
    get size() {
      return entries.length;
    },
  };
}
